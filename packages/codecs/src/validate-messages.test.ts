import { ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { everyPartKind } from './__fixtures__/ui-messages';
import {
  checkMessages,
  MessageValidationError,
  validateMessage,
  validateMessages,
} from './validate-messages';

const hello: UIMessage = { id: 'h1', role: 'user', parts: [{ type: 'text', text: 'hello' }] };

describe('validateMessages', () => {
  it('accepts valid messages, every part kind included, and an empty list', async () => {
    await expect(validateMessages([hello, everyPartKind])).resolves.toEqual([hello, everyPartKind]);
    await expect(validateMessages([])).resolves.toEqual([]);
    await expect(validateMessage(hello)).resolves.toEqual(hello);
  });

  it('names the message and the field that failed', async () => {
    const broken = { id: 'bad-1', role: 'user', parts: [{ type: 'text', text: 7 }] };
    const error = await validateMessages([hello, broken]).catch((caught: unknown) => caught);
    expect(MessageValidationError.isInstance(error)).toBe(true);
    expect(ValidationError.isInstance(error)).toBe(true);
    const failure = error as MessageValidationError;
    expect(failure.index).toBe(1);
    expect(failure.messageId).toBe('bad-1');
    expect(failure.message).toContain('messages[1] (id "bad-1")');
    expect(failure.issues).toContainEqual({
      path: 'messages[1].parts[0].text',
      message: expect.stringContaining('expected string'),
    });
  });

  it.each([
    ['a missing role', { id: 'a', parts: [] }, 'messages[0].role'],
    ['parts that are not an array', { id: 'a', role: 'user', parts: 'nope' }, 'messages[0].parts'],
    [
      'an unknown part type',
      { id: 'a', role: 'user', parts: [{ type: 'bogus' }] },
      'messages[0].parts[0].type',
    ],
  ])('reports %s at its path', async (_label, candidate, path) => {
    const error = (await validateMessages([candidate]).catch(
      (caught: unknown) => caught,
    )) as MessageValidationError;
    expect(error.issues.map((issue) => issue.path)).toContain(path);
    expect(error.message).toContain(path);
  });

  it('validates metadata and data parts against the given schemas', async () => {
    const schemas = { metadataSchema: z.object({ model: z.string() }) };
    const withNumberModel = { ...hello, metadata: { model: 5 } };
    await expect(validateMessages([withNumberModel], schemas)).rejects.toThrow(
      'messages[0].metadata.model: Invalid input: expected string',
    );
    await expect(
      validateMessages([{ ...hello, metadata: { model: 'x' } }], schemas),
    ).resolves.toHaveLength(1);
  });

  it('names the data part whose schema failed', async () => {
    const schemas = { dataSchemas: { chart: z.object({ label: z.number() }) } };
    await expect(validateMessages([everyPartKind], schemas)).rejects.toThrow(
      'messages[0].parts[11].data.label',
    );
  });

  it('refuses a message without parts, as the AI SDK does', async () => {
    await expect(validateMessages([{ id: 'e', role: 'user', parts: [] }])).rejects.toThrow(
      'messages[0].parts',
    );
  });

  it('checkMessages reports each message on its own so one bad message can be skipped', async () => {
    const checks = await checkMessages([hello, { id: 'x', role: 'user', parts: 3 }, everyPartKind]);
    expect(checks.map((check) => check.success)).toEqual([true, false, true]);
    const failed = checks[1];
    expect(failed?.success === false && failed.error.messageId).toBe('x');
  });

  it('refuses a list that is not an array', async () => {
    await expect(validateMessages('x' as unknown as unknown[])).rejects.toThrow(
      /messages must be an array/,
    );
    await expect(checkMessages({} as unknown as unknown[])).rejects.toThrow(
      /messages must be an array/,
    );
  });
});
