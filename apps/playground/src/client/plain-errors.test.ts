import { describe, expect, it } from 'vitest';
import { plainError, plainPath } from './plain-errors';

describe('plainError', () => {
  it('tells an ownership refusal without ids or class names', () => {
    const told = plainError({
      errorName: 'OwnershipError',
      message:
        'Chat "c-1f2e" belongs to another user; user "intruder" may not open it. Nothing was read or written.',
    });
    expect(told.title).toBe('Not your chat');
    expect(told.message).toContain('belongs to another user');
    expect(`${told.title} ${told.message}`).not.toMatch(/c-1f2e|OwnershipError/);
  });

  it('drops the option a library user would pass and keeps the name taken', () => {
    const told = plainError({
      errorName: 'CheckpointExistsError',
      message:
        'Checkpoint "answered" already exists in chat "c-9". Delete it first or pass { replace: true } to move it.',
    });
    expect(told.message).toBe(
      'A checkpoint named “answered” already exists in this chat. Pick another name.',
    );
  });

  it('names the fragment and field of a validation issue by position, counted from 1', () => {
    const told = plainError({
      errorName: 'SerializationError',
      message: 'fragments[0].definition: toFragment: expected string.',
      issues: [{ path: 'fragments[0].definition', message: 'toFragment: expected string' }],
    });
    expect(told.title).toBe('Not accepted');
    expect(told.message).toBe('fragment 1, field “definition”: expected string.');
  });

  it('says what to do when the checkpointed branch is empty', () => {
    const told = plainError({
      errorName: 'EngineError',
      message:
        'checkpoint("x"): branch "main" has no saved message yet; save() before taking a checkpoint.',
    });
    expect(told.message).toBe('This branch has no message yet: send one first.');
  });

  it('keeps an unknown error readable, without method prefixes or chat ids', () => {
    const told = plainError({
      errorName: 'InternalError',
      message: 'rewind(messageId): something broke in chat "c-7"',
    });
    expect(told).toEqual({ title: 'Something went wrong', message: 'something broke' });
  });
});

describe('plainPath', () => {
  it('reads list positions from 1 and nested fields with ›', () => {
    expect(plainPath('fragments[2]')).toBe('fragment 3');
    expect(plainPath('fragments[0].policies[1].rule')).toBe(
      'fragment 1, field “policies 2 › rule”',
    );
    expect(plainPath('fragments')).toBe('the context');
    expect(plainPath('title')).toBe('“title”');
  });
});
