import {
  type ContextStore,
  type JsonValue,
  MAX_JSON_DEPTH,
  ValidationError,
} from '@ctxgraph/fragments-core';
import { describe, expect, it } from 'vitest';
import {
  appendMessages,
  badIdentifiers,
  expectRejection,
  nestedValue,
  openFreshChat,
  type StoreHarness,
  snapshot,
  uniqueId,
} from './store-harness';

/** Bad input to `getContext` / `saveContext`: refused with `ValidationError`, nothing changed. */
export function defineContextLaneInputTests(harness: StoreHarness): void {
  const { timeout } = harness;

  /**
   * Expects `call` to reject with `ValidationError` naming `field`, and the chat (its lane and its
   * graph) to be exactly as before.
   */
  async function expectLaneRefused(
    store: ContextStore,
    chatId: string,
    label: string,
    field: string,
    call: () => Promise<unknown>,
  ): Promise<void> {
    const before = { lane: await store.getContext(chatId), graph: await snapshot(store, chatId) };
    const error = await expectRejection(call, ValidationError).catch((failure: unknown) => {
      throw new Error(`${label}: ${failure instanceof Error ? failure.message : String(failure)}`);
    });
    const mentioned =
      error.message.includes(field) || error.issues.some((issue) => issue.path.includes(field));
    expect(mentioned, `${label}: the error should name ${field}, got "${error.message}"`).toBe(
      true,
    );
    const after = { lane: await store.getContext(chatId), graph: await snapshot(store, chatId) };
    expect(after, `${label}: nothing may change`).toEqual(before);
  }

  describe('context lane: bad input', () => {
    it(
      'refuses bad chat ids, a non-object input, and fragments that are not an array',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await appendMessages(store, chatId, [uniqueId('m')]);
        await store.saveContext({ chatId, fragments: ['kept'] });
        const refused = (label: string, field: string, call: () => Promise<unknown>) =>
          expectLaneRefused(store, chatId, label, field, call);
        for (const [what, bad] of badIdentifiers) {
          await refused(`getContext ${what}`, 'chatId', () => store.getContext(bad as string));
          await refused(`saveContext chatId ${what}`, 'chatId', () =>
            store.saveContext({ chatId: bad as string, fragments: [] }),
          );
        }
        await refused('input null', 'input', () => store.saveContext(null as never));
        await refused('input a string', 'input', () => store.saveContext('x' as never));
        for (const [what, bad] of [
          ['an object', { 0: 'x' }],
          ['a string', '["x"]'],
          ['null', null],
          ['undefined', undefined],
          ['a number', 1],
        ] as const) {
          await refused(`fragments ${what}`, 'fragments', () =>
            store.saveContext({ chatId, fragments: bad as never }),
          );
        }
      },
      timeout,
    );

    it(
      'refuses fragments that would not come back the same: NUL, lone surrogates, non-JSON values, cycles',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await store.saveContext({ chatId, fragments: [{ type: 'hint', text: 'kept' }] });
        const cycle: Record<string, unknown> = { type: 'hint' };
        cycle.self = cycle;
        const cases: [string, unknown][] = [
          ['a NUL character', { type: 'hint', text: 'a\u0000b' }],
          ['a lone high surrogate', { type: 'hint', text: 'x\uD83Dy' }],
          ['a lone low surrogate', 'x\uDE00'],
          ['a key with a lone surrogate', { 'k\uD800': 1 }],
          ['a key with NUL', { 'k\u0000': 1 }],
          ['NaN', { value: Number.NaN }],
          ['Infinity', Number.POSITIVE_INFINITY],
          ['a bigint', { value: 1n }],
          ['a function', { value: () => 1 }],
          ['a Date instance', { value: new Date(0) }],
          ['a Map instance', new Map()],
          ['undefined in an array', [1, undefined]],
          ['a cycle', cycle],
        ];
        for (const [what, bad] of cases) {
          await expectLaneRefused(store, chatId, what, 'fragments', () =>
            store.saveContext({ chatId, fragments: ['fine', bad as JsonValue] }),
          );
        }
      },
      timeout,
    );

    it(
      `accepts nesting up to ${MAX_JSON_DEPTH} levels (the array counts as one) and refuses deeper`,
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        const deepest = [nestedValue(MAX_JSON_DEPTH - 1) as JsonValue];
        const saved = await store.saveContext({ chatId, fragments: deepest });
        expect(JSON.stringify(saved.fragments)).toBe(JSON.stringify(deepest));
        await expectLaneRefused(store, chatId, 'too deep', 'fragments', () =>
          store.saveContext({ chatId, fragments: [nestedValue(MAX_JSON_DEPTH) as JsonValue] }),
        );
      },
      timeout,
    );

    it(
      'refuses an expectedRevision that is not a non-negative safe integer',
      async () => {
        const store = harness.store();
        const { chatId } = await openFreshChat(store);
        await store.saveContext({ chatId, fragments: ['kept'] });
        for (const bad of [
          -1,
          1.5,
          '1',
          null,
          Number.NaN,
          Number.POSITIVE_INFINITY,
          Number.MAX_SAFE_INTEGER + 1,
          true,
        ]) {
          await expectLaneRefused(
            store,
            chatId,
            `expectedRevision ${String(bad)}`,
            'expectedRevision',
            () => store.saveContext({ chatId, fragments: [], expectedRevision: bad as never }),
          );
        }
      },
      timeout,
    );
  });
}
