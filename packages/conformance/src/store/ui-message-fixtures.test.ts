import { validateUIMessages } from 'ai';
import { describe, expect, it } from 'vitest';
import { defineStoreConformance } from './define-store-conformance';
import { uiMessageFixtures } from './ui-message-fixtures';

describe('uiMessageFixtures', () => {
  it('are valid AI SDK UIMessages', async () => {
    const validated = await validateUIMessages({ messages: [...uiMessageFixtures] as never });
    expect(validated).toHaveLength(uiMessageFixtures.length);
  });

  it('cover every part kind and every tool state', () => {
    const parts = uiMessageFixtures.flatMap(
      (message) => message.parts as { type: string; state?: string }[],
    );
    const kinds = new Set(
      parts.map((part) =>
        part.type.startsWith('data-')
          ? 'data-*'
          : part.type.startsWith('tool-')
            ? 'tool-*'
            : part.type,
      ),
    );
    expect([...kinds].sort()).toEqual(
      [
        'data-*',
        'dynamic-tool',
        'file',
        'reasoning',
        'source-document',
        'source-url',
        'step-start',
        'text',
        'tool-*',
      ].sort(),
    );
    const toolStates = new Set(
      parts.filter((part) => part.type.startsWith('tool-')).map((part) => part.state),
    );
    expect([...toolStates].sort()).toEqual(
      [
        'approval-requested',
        'approval-responded',
        'input-available',
        'input-streaming',
        'output-available',
        'output-denied',
        'output-error',
      ].sort(),
    );
    const dynamicStates = new Set(
      parts.filter((part) => part.type === 'dynamic-tool').map((part) => part.state),
    );
    expect([...dynamicStates].sort()).toEqual([
      'input-available',
      'input-streaming',
      'output-available',
      'output-error',
    ]);
    expect(new Set(uiMessageFixtures.map((message) => message.id)).size).toBe(
      uiMessageFixtures.length,
    );
  });

  it('are frozen all the way down', () => {
    const parts = uiMessageFixtures[1]?.parts as unknown[];
    expect(Object.isFrozen(uiMessageFixtures)).toBe(true);
    expect(Object.isFrozen(parts[0])).toBe(true);
    expect(() => {
      parts.push({ type: 'text', text: 'x' });
    }).toThrow(TypeError);
  });
});

describe('defineStoreConformance options', () => {
  it('refuses options without a name or a createStore function, naming each problem', () => {
    expect(() => defineStoreConformance({ name: '', createStore: 'nope' as never })).toThrow(
      'defineStoreConformance(options): name: expected a non-empty string; createStore: expected a function.',
    );
    expect(() =>
      defineStoreConformance({
        name: 'x',
        createStore: () => ({}) as never,
        reopenStore: 1 as never,
        timeoutMs: 0,
      }),
    ).toThrow('reopenStore: expected a function; timeoutMs: expected a positive integer.');
  });
});
