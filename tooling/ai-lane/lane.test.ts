import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { validateMessages } from '@ctxgraph/codecs';
import * as ai from 'ai';
import { describe, expect, it } from 'vitest';
import { aiLane, laneSpecifier } from './lane.mjs';

const tooling = fileURLToPath(new URL('..', import.meta.url));
const register = fileURLToPath(new URL('./register.mjs', import.meta.url));

/** The `ai` version a plain Node process resolves from tooling/, with the lane's hooks. */
function aiVersionInNode(lane: '6' | '7'): string {
  const result = spawnSync(
    process.execPath,
    [
      '--import',
      register,
      '--input-type=module',
      '-e',
      "const { default: manifest } = await import('ai/package.json', { with: { type: 'json' } }); console.log(manifest.version);",
    ],
    { cwd: tooling, encoding: 'utf8', env: { ...process.env, CTXGRAPH_AI_LANE: lane } },
  );
  expect(result.stderr).toBe('');
  return result.stdout.trim();
}

describe('the AI SDK lane', () => {
  it('follows CTXGRAPH_AI_LANE, else the Node major', () => {
    expect(aiLane({ CTXGRAPH_AI_LANE: '6' }, '24.1.0')).toBe('6');
    expect(aiLane({ CTXGRAPH_AI_LANE: '7' }, '20.19.0')).toBe('7');
    expect(aiLane({}, '20.19.0')).toBe('6');
    expect(aiLane({ CTXGRAPH_AI_LANE: '' }, '22.0.0')).toBe('7');
    expect(aiLane({}, '24.3.0')).toBe('7');
  });

  it('refuses a lane that is not an AI SDK major it knows', () => {
    expect(() => aiLane({ CTXGRAPH_AI_LANE: '5' })).toThrow(
      'CTXGRAPH_AI_LANE must be 6 or 7 (the AI SDK major), received "5".',
    );
    expect(() => aiLane({ CTXGRAPH_AI_LANE: 'latest' })).toThrow('must be 6 or 7');
  });

  it('swaps ai and @ai-sdk/openai (subpaths kept) on lane 6 only', () => {
    expect(laneSpecifier('ai', '6')).toBe('ai-v6');
    expect(laneSpecifier('ai/test', '6')).toBe('ai-v6/test');
    expect(laneSpecifier('@ai-sdk/openai', '6')).toBe('@ai-sdk/openai-v3');
    expect(laneSpecifier('@ai-sdk/react', '6')).toBe('@ai-sdk/react-v3');
    expect(laneSpecifier('aim', '6')).toBeUndefined();
    expect(laneSpecifier('@ai-sdk/provider', '6')).toBeUndefined();
    expect(laneSpecifier('ai', '7')).toBeUndefined();
  });

  it("puts this vitest run's ai on the lane (the plugin)", () => {
    // isCustomContentUIPart came with AI SDK 7.
    expect('isCustomContentUIPart' in ai).toBe(aiLane() === '7');
  });

  it("reaches the ai that sibling packages' dist imports", async () => {
    // @ctxgraph/codecs (its built dist) validates with its own `ai` import: a `custom` part exists
    // on AI SDK 7 only.
    const custom = { id: 'c', role: 'assistant', parts: [{ type: 'custom', kind: 'acme.note' }] };
    const validated = validateMessages([custom]);
    if (aiLane() === '7') await expect(validated).resolves.toEqual([custom]);
    else await expect(validated).rejects.toThrow('unknown part type "custom"');
  });

  it('puts a plain Node process on the lane (the hooks)', () => {
    expect(aiVersionInNode('6')).toMatch(/^6\./);
    expect(aiVersionInNode('7')).toMatch(/^7\./);
  });
});
