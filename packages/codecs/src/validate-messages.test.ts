import { ValidationError } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { aiMajor } from '../../../tooling/ai-major/major.mjs';
import { everyPartKind } from './__fixtures__/ui-messages';
import { storableMessageIssues } from './storable-message';
import {
  checkMessages,
  MessageValidationError,
  validateMessage,
  validateMessages,
} from './validate-messages';

const hello: UIMessage = { id: 'h1', role: 'user', parts: [{ type: 'text', text: 'hello' }] };

// The part types each AI SDK major knows, in the order its schema lists them (AI SDK 7 added
// `custom`, `reasoning-file` and `steering-message`).
const knownPartTypes =
  aiMajor() === '7'
    ? '"text", "reasoning", "custom", "source-url", "source-document", "file", "reasoning-file", "steering-message", "step-start", "data-<name>", "dynamic-tool", "tool-<name>"'
    : '"text", "reasoning", "source-url", "source-document", "file", "step-start", "data-<name>", "dynamic-tool", "tool-<name>"';

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

  it.each([
    [
      'an unknown part type, listing the known ones',
      { type: 'bogus' },
      `messages[0].parts[0].type: unknown part type "bogus" (known: ${knownPartTypes})`,
    ],
    [
      'an unknown part type that has the fields of a data part',
      { type: 'bogus', data: 1 },
      'messages[0].parts[0].type: unknown part type "bogus"',
    ],
    [
      'a part whose type is not a string',
      { text: 'x' },
      'messages[0].parts[0].type: expected a string part type (',
    ],
    [
      'a tool part without its toolCallId',
      { type: 'tool-weather', state: 'output-available', input: {}, output: 1 },
      'messages[0].parts[0].toolCallId: missing (expected string)',
    ],
    [
      'a dynamic tool part without its toolName',
      { type: 'dynamic-tool', toolCallId: 'c', state: 'input-available', input: {} },
      'messages[0].parts[0].toolName: missing (expected string)',
    ],
    [
      'a tool part in a state that does not exist',
      { type: 'tool-weather', toolCallId: 'c', state: 'done', input: {} },
      'messages[0].parts[0].state: unknown state "done" (expected one of "input-streaming", "input-available", "approval-requested", "approval-responded", "output-available", "output-error", "output-denied")',
    ],
    [
      'a tool part without a state',
      { type: 'tool-weather', toolCallId: 'c', input: {} },
      'messages[0].parts[0].state: missing (expected one of "input-streaming"',
    ],
    [
      'a field a tool state does not allow',
      { type: 'tool-weather', toolCallId: 'c', state: 'input-available', input: {}, output: 3 },
      'messages[0].parts[0].output: not allowed when state is "input-available" (received number)',
    ],
    [
      'a text part without its text that has the fields of a data part',
      { type: 'text', data: 1 },
      'messages[0].parts[0].text: missing (expected string)',
    ],
    [
      'a data part without data',
      { type: 'data-chart' },
      'messages[0].parts[0].data: missing (required)',
    ],
  ])('says the real cause for %s', async (_label, part, expected) => {
    const candidate = { id: 'p', role: 'assistant', parts: [part] };
    const error = (await validateMessages([candidate]).catch(
      (caught: unknown) => caught,
    )) as MessageValidationError;
    expect(MessageValidationError.isInstance(error)).toBe(true);
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain('must start with');
    expect(error.issues).toHaveLength(1);
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

  // AI SDK 7's part types: accepted on AI SDK 7 (and stored as they are), refused as an unknown
  // part type on AI SDK 6; a broken one names its wrong field on 7.
  const aiSdk7Parts: readonly [string, Record<string, unknown>, string, string][] = [
    ['custom', { type: 'custom', kind: 'acme.note' }, { type: 'custom' }, 'kind'],
    [
      'reasoning-file',
      { type: 'reasoning-file', mediaType: 'image/png', url: 'data:image/png;base64,AA==' },
      { type: 'reasoning-file', mediaType: 'image/png' },
      'url',
    ],
    [
      'steering-message',
      { type: 'steering-message', id: 's1', parts: [{ type: 'text', text: 'shorter, please' }] },
      { type: 'steering-message', id: 's1' },
      'parts',
    ],
  ].map(([type, valid, broken, field]) => [
    type as string,
    valid as Record<string, unknown>,
    JSON.stringify(broken),
    field as string,
  ]);

  it.each(aiSdk7Parts)(
    'handles the AI SDK 7 part type %s consistently on each major',
    async (type, valid, broken, field) => {
      const message = { id: `v-${type}`, role: 'assistant', parts: [valid] };
      const brokenMessage = { id: `b-${type}`, role: 'assistant', parts: [JSON.parse(broken)] };
      const refusal = (await validateMessages([brokenMessage]).catch(
        (caught: unknown) => caught,
      )) as MessageValidationError;
      expect(MessageValidationError.isInstance(refusal)).toBe(true);
      expect(storableMessageIssues(message)).toEqual([]);
      if (aiMajor() === '7') {
        await expect(validateMessages([message])).resolves.toEqual([message]);
        expect(refusal.message).toContain(`messages[0].parts[0].${field}: missing (expected `);
      } else {
        const unknown = `messages[0].parts[0].type: unknown part type "${type}" (known: ${knownPartTypes})`;
        await expect(validateMessages([message])).rejects.toThrow(unknown);
        expect(refusal.message).toContain(unknown);
      }
    },
  );
});
