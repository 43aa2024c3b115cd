import { describe, expect, it } from 'vitest';
import {
  assertInputObject,
  assertOptionalBoolean,
  assertTitle,
  mergeMetadata,
} from './input-checks';

describe('assertTitle, assertOptionalBoolean, assertInputObject', () => {
  it('accepts titles, and null only where a title can be cleared', () => {
    expect(() => assertTitle('openChat(input)', 'Q3 revenue 📈', false)).not.toThrow();
    expect(() => assertTitle('openChat(input)', undefined, false)).not.toThrow();
    expect(() => assertTitle('updateChat(input)', null, true)).not.toThrow();
    expect(() => assertTitle('openChat(input)', null, false)).toThrow(
      'openChat(input): title expected a string, received null.',
    );
    expect(() => assertTitle('updateChat(input)', 5, true)).toThrow(
      'title expected a string or null, received number',
    );
    expect(() => assertTitle('m', 'a\u0000b', true)).toThrow(
      'title must not contain the NUL character',
    );
    expect(() => assertTitle('m', 'a\uD800', true)).toThrow('lone UTF-16 surrogate');
  });

  it('checks flags and input objects', () => {
    expect(() => assertOptionalBoolean('createBranch(input)', 'activate', undefined)).not.toThrow();
    expect(() => assertOptionalBoolean('createBranch(input)', 'activate', 'yes')).toThrow(
      'createBranch(input): activate must be a boolean, received string.',
    );
    expect(() => assertInputObject('getBranch(input)', null)).toThrow(
      'getBranch(input): input must be an object.',
    );
    expect(() => assertInputObject('getBranch(input)', {})).not.toThrow();
  });

  it('mergeMetadata merges shallowly', () => {
    expect(mergeMetadata({ a: 1, b: { c: 2 } }, { b: { d: 3 }, e: null })).toEqual({
      a: 1,
      b: { d: 3 },
      e: null,
    });
    expect(mergeMetadata({ a: 1 }, undefined)).toEqual({ a: 1 });
  });
});
