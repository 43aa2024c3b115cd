import { describe, expect, it } from 'vitest';
import { type CacheMemory, type CacheUnit, predictCache } from './cache-prediction';
import type { CacheRules } from './cache-profiles';

const breakpoints: CacheRules = {
  mode: 'breakpoints',
  maxBreakpoints: 4,
  minCacheableTokens: 100,
  ttlSeconds: 300,
  prefixStep: 1,
  reportsWrites: true,
};
const prefix: CacheRules = {
  mode: 'prefix',
  maxBreakpoints: 0,
  minCacheableTokens: 100,
  ttlSeconds: 300,
  prefixStep: 32,
  reportsWrites: false,
};
const noPrefixReport = { compared: false, reusedTokens: 0, totalTokens: 0, firstChange: null };

/** The system prompt then `count` messages of `tokens` each (`m0`, `m1`, …). */
function units(count: number, tokens = 50, system = 'system prompt'): CacheUnit[] {
  const list: CacheUnit[] = [
    { kind: 'system', id: 'system', name: 'system', tokens, hash: system },
  ];
  for (let index = 0; index < count; index += 1) {
    list.push({ kind: 'message', id: `m${index}`, name: 'user', tokens, hash: `h${index}` });
  }
  return list;
}

function predict(
  input: CacheUnit[],
  marks: number[],
  memory: CacheMemory | null,
  now: number,
  rules = breakpoints,
) {
  return predictCache({
    profile: 'test',
    modelId: 'model',
    rules,
    units: input,
    marks,
    inputTokens: input.reduce((sum, unit) => sum + unit.tokens, 0),
    prefix: noPrefixReport,
    memory,
    now,
  });
}

describe('predictCache', () => {
  it('breakpoints: writes up to the last mark, then reads the entry a later call marks again', () => {
    const first = predict(units(3), [0, 3], null, 0);
    expect(first.prediction).toMatchObject({ readTokens: 0, writeTokens: 200, newTokens: 200 });
    expect(first.prediction.break?.cause).toBe('first-call');
    const second = predict(units(5), [0, 3, 5], first.memory, 1000);
    expect(second.prediction).toMatchObject({
      readTokens: 200,
      writeTokens: 100,
      reusableTokens: 200,
      newTokens: 100,
      break: null,
    });
  });

  it('breakpoints: an entry more than 20 blocks before every mark is not found', () => {
    const first = predict(units(3), [3], null, 0);
    const far = predict(units(30), [30], first.memory, 1000);
    expect(far.prediction.readTokens).toBe(0);
    expect(far.prediction.break?.cause).toBe('not-marked');
    const near = predict(units(23), [23], first.memory, 1000);
    expect(near.prediction.readTokens).toBe(200);
  });

  it('breakpoints: prefixes below the minimum are neither written nor read', () => {
    const first = predict(units(1), [1], null, 0);
    expect(first.prediction.writeTokens).toBe(100);
    const small = predict(units(0), [0], null, 0);
    expect(small.prediction.writeTokens).toBe(0);
    const next = predict(units(1), [0, 1], small.memory, 10);
    expect(next.prediction.readTokens).toBe(0);
    expect(next.prediction.break?.cause).toBe('below-minimum');
  });

  it('breakpoints: entries expire after the time to live; a read renews them', () => {
    const first = predict(units(3), [3], null, 0);
    const renewed = predict(units(4), [3, 4], first.memory, 200_000);
    expect(renewed.prediction.readTokens).toBe(200);
    // 400 s after the first write, but 200 s after the read that renewed it.
    const later = predict(units(4), [3, 4], renewed.memory, 400_000);
    expect(later.prediction.readTokens).toBe(250);
    const expired = predict(units(4), [3, 4], later.memory, 800_000);
    expect(expired.prediction.readTokens).toBe(0);
    expect(expired.prediction.break?.cause).toBe('expired');
  });

  it('names the system prompt when it changed and a removed message when history was cut', () => {
    const first = predict(units(3), [0, 3], null, 0);
    const edited = predict(units(3, 50, 'another prompt'), [0, 3], first.memory, 10);
    expect(edited.prediction.readTokens).toBe(0);
    expect(edited.prediction.break).toEqual({
      kind: 'system',
      id: 'system',
      name: 'system',
      cause: 'changed',
    });
    const cut = units(3).filter((unit) => unit.id !== 'm0');
    const afterCut = predict(cut, [0, 2], first.memory, 10);
    expect(afterCut.prediction.break).toEqual({
      kind: 'message',
      id: 'm0',
      name: 'user',
      cause: 'removed',
    });
  });

  it('prefix mode: reads the shared prefix rounded down to the step past the minimum', () => {
    const first = predict(units(4, 45), [], null, 0, prefix);
    expect(first.prediction.readTokens).toBe(0);
    // Shared: 5 units of 45 = 225 tokens → 100 + 3 × 32 = 196.
    const second = predict(units(6, 45), [], first.memory, 1000, prefix);
    expect(second.prediction.readTokens).toBe(196);
    expect(second.prediction.writeTokens).toBe(0);
    const late = predict(units(7, 45), [], second.memory, 1000 + 301_000, prefix);
    expect(late.prediction.readTokens).toBe(0);
    expect(late.prediction.break?.cause).toBe('expired');
  });

  it('another model or profile starts from nothing', () => {
    const first = predict(units(3), [3], null, 0);
    const other = predictCache({
      profile: 'test',
      modelId: 'another-model',
      rules: breakpoints,
      units: units(4),
      marks: [4],
      inputTokens: 250,
      prefix: noPrefixReport,
      memory: first.memory,
      now: 10,
    });
    expect(other.prediction.readTokens).toBe(0);
    expect(other.prediction.break?.cause).toBe('model-changed');
  });
});
