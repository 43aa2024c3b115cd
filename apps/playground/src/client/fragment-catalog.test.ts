import { builtinFragmentDescriptors, type JsonValue } from '@ctxgraph/fragments-core';
import { fromFragment, toFragment } from '@ctxgraph/serialization';
import { describe, expect, it } from 'vitest';
import type { FlatFragment } from './api';
import { cleanFragment, emptyFragment, FRAGMENT_SPECS, specFor } from './fragment-catalog';

/** Fills every field of a new fragment the way a user would, with plausible values. */
function filled(type: string): FlatFragment {
  const value = emptyFragment(type) as Record<string, JsonValue>;
  for (const item of specFor(type)?.fields ?? []) {
    if (item.kind === 'text' || item.kind === 'longtext') value[item.key] = `${item.label} text`;
    else if (item.kind === 'list')
      value[item.key] = (value[item.key] as string[]).map((_, index) => `item ${index}`);
    else if (item.kind === 'entries') value[item.key] = { ARR: 'annual recurring revenue' };
    else if (item.kind === 'policies')
      value[item.key] = [{ type: 'policy', rule: 'Check table names' }, 'plain'];
    else if (item.kind === 'children') value[item.key] = [{ type: 'hint', text: 'inside' }];
  }
  return value as FlatFragment;
}

describe('fragment catalog', () => {
  it('has a form for every built-in fragment type, derived from its descriptor', () => {
    for (const descriptor of builtinFragmentDescriptors) {
      const spec = specFor(descriptor.name);
      expect(spec, `no form for "${descriptor.name}"`).toBeDefined();
      expect(spec?.label).toBe(descriptor.label);
      expect(spec?.builder).toBe(descriptor.signature);
      expect(spec?.fields.map((item) => [item.key, item.label, item.required])).toEqual(
        descriptor.fields.map((field) => [field.name, field.label, field.required]),
      );
    }
    expect(FRAGMENT_SPECS).toHaveLength(builtinFragmentDescriptors.length + 1);
    expect(FRAGMENT_SPECS.slice(0, 3).map((spec) => spec.type)).toEqual([
      'role',
      'hint',
      'fragment',
    ]);
  });

  it.each(FRAGMENT_SPECS.map((spec) => [spec.type]))(
    'a filled-in %s form is accepted by serialization and reads back the same',
    (type) => {
      const flat = cleanFragment(filled(type));
      const hydrated = toFragment(flat);
      expect(fromFragment(hydrated)).toEqual(flat);
    },
  );

  it('starts lists with as many items as the builder needs', () => {
    expect(emptyFragment('analogy').concepts).toEqual(['', '']);
    expect(emptyFragment('workflow').steps).toEqual(['']);
    expect(emptyFragment('workflow').triggers).toEqual(['']);
  });

  it('keeps the budget settings of a fragment through the form, and drops blank ones', () => {
    const value = {
      type: 'role',
      text: 'You are terse.',
      budget: { priority: -1, required: false },
    };
    const cleaned = cleanFragment(value as FlatFragment);
    expect(cleaned).toEqual(value);
    expect(toFragment(cleaned as JsonValue)).toMatchObject({ budget: { priority: -1 } });
    expect(cleanFragment({ type: 'role', text: 'x', budget: {} } as FlatFragment)).toEqual({
      type: 'role',
      text: 'x',
    });
  });
});
