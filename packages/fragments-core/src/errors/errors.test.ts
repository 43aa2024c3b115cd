import { describe, expect, it } from 'vitest';
import { CtxGraphError } from './ctxgraph-error';
import {
  BranchExistsError,
  BranchNotFoundError,
  ChatNotFoundError,
  CheckpointExistsError,
  ConflictError,
  HeadConflictError,
  MessageNotFoundError,
  NotFoundError,
  OwnershipError,
  SchemaVersionError,
  StoreError,
  ValidationError,
} from './errors';

describe('errors', () => {
  it('have stable names and marker-based isInstance up the hierarchy', () => {
    const error = new ChatNotFoundError('chat-1');
    expect(error.name).toBe('ChatNotFoundError');
    expect(error.message).toBe('Chat "chat-1" does not exist.');
    expect(ChatNotFoundError.isInstance(error)).toBe(true);
    expect(NotFoundError.isInstance(error)).toBe(true);
    expect(CtxGraphError.isInstance(error)).toBe(true);
    expect(BranchNotFoundError.isInstance(error)).toBe(false);
    expect(ValidationError.isInstance(error)).toBe(false);
    expect(error).toBeInstanceOf(Error);
  });

  it('recognize an error built by another copy of the package (same markers, other classes)', () => {
    // A second copy defines its own classes with the same names; only the markers are shared.
    class OtherCopyBase extends Error {
      constructor(message: string, names: string[]) {
        super(message);
        for (const name of names)
          Object.defineProperty(this, Symbol.for(`ctxgraph.error.${name}`), { value: true });
      }
    }
    const foreign = new OtherCopyBase('x', ['CtxGraphError', 'ConflictError', 'HeadConflictError']);
    expect(HeadConflictError.isInstance(foreign)).toBe(true);
    expect(ConflictError.isInstance(foreign)).toBe(true);
    expect(BranchExistsError.isInstance(foreign)).toBe(false);
    expect(foreign instanceof HeadConflictError).toBe(false);
  });

  it('isInstance is false for non-errors', () => {
    for (const value of [null, undefined, 'ValidationError', 1, {}, new Error('x')]) {
      expect(CtxGraphError.isInstance(value)).toBe(false);
    }
  });

  it('carry their details', () => {
    const conflict = new HeadConflictError({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: 'a',
      currentHeadId: 'b',
    });
    expect(conflict).toMatchObject({
      chatId: 'c',
      branch: 'main',
      expectedHeadId: 'a',
      currentHeadId: 'b',
    });
    expect(conflict.message).toContain('expected head "a", found "b"');
    expect(new MessageNotFoundError('c', 'm').message).toBe(
      'Message "m" does not exist in chat "c".',
    );
    expect(new OwnershipError('c', 'u').message).toContain('user "u" may not open it');
    expect(new CheckpointExistsError('c', 'cp').message).toContain('replace: true');
    const validation = new ValidationError('bad', {
      issues: [{ path: 'a.b', message: 'expected string' }],
    });
    expect(validation.issues).toEqual([{ path: 'a.b', message: 'expected string' }]);
    expect(new ValidationError('only a message').issues).toEqual([
      { path: '', message: 'only a message' },
    ]);
  });

  it('keep the cause', () => {
    const cause = new Error('socket closed');
    const error = new StoreError('Could not save', { cause });
    expect(error.cause).toBe(cause);
    expect(SchemaVersionError.isInstance(new SchemaVersionError('newer'))).toBe(true);
    expect(StoreError.isInstance(new SchemaVersionError('newer'))).toBe(true);
  });

  it('let third parties subclass with their own marker', () => {
    class ThrottledError extends StoreError {
      static override readonly errorName: string = 'ThrottledError';
    }
    const error = new ThrottledError('slow down');
    expect(error.name).toBe('ThrottledError');
    expect(ThrottledError.isInstance(error)).toBe(true);
    expect(StoreError.isInstance(error)).toBe(true);
    expect(ThrottledError.isInstance(new StoreError('x'))).toBe(false);
  });
});
