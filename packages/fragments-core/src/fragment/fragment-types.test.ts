import { describe, expect, it } from 'vitest';
import * as core from '../index';
import { builtinFragmentDescriptors, type FragmentTypeDescriptor } from '../index';
import { glossaryType, guardrailType, identityType, policyType, termType } from './fragment-types';

/** A value for each field that the builder accepts. */
function sampleFields(descriptor: FragmentTypeDescriptor): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const field of descriptor.fields) {
    if (field.kind === 'text') fields[field.name] = `${field.label} value`;
    else if (field.kind === 'textList')
      fields[field.name] = Array.from(
        { length: Math.max(1, field.minItems ?? 0) },
        (_, i) => `${i}`,
      );
    else if (field.kind === 'entries') fields[field.name] = { ARR: 'annual recurring revenue' };
    else fields[field.name] = ['plain text'];
  }
  return fields;
}

describe('built-in fragment type descriptors', () => {
  it('names each type once, with a builder of the same name exported', () => {
    const names = builtinFragmentDescriptors.map((descriptor) => descriptor.name);
    expect(new Set(names).size).toBe(names.length);
    for (const name of names) {
      expect(typeof (core as Record<string, unknown>)[name]).toBe('function');
      expect(builtinFragmentDescriptors.find((d) => d.name === name)?.signature).toMatch(
        new RegExp(`^${name}\\(`),
      );
    }
  });

  it('describes every field for forms: a label, help, and consistent options', () => {
    for (const descriptor of builtinFragmentDescriptors) {
      expect(descriptor.label.trim()).not.toBe('');
      expect(descriptor.fields.length).toBeGreaterThan(0);
      const fieldNames = descriptor.fields.map((field) => field.name);
      expect(new Set(fieldNames).size).toBe(fieldNames.length);
      expect(fieldNames).not.toContain('type');
      if (descriptor.dataField !== undefined) expect(fieldNames).toEqual([descriptor.dataField]);
      for (const name of descriptor.atLeastOneOf ?? []) expect(fieldNames).toContain(name);
      for (const field of descriptor.fields) {
        expect(field.label.trim(), `${descriptor.name}.${field.name}`).not.toBe('');
        expect(field.help.trim(), `${descriptor.name}.${field.name}`).not.toBe('');
        if (field.kind === 'fragments') expect(field.fragmentTypes?.length).toBeGreaterThan(0);
      }
    }
  });

  it.each(builtinFragmentDescriptors.map((descriptor) => [descriptor.name, descriptor] as const))(
    '%s builds from its fields, and the builder agrees',
    (_name, descriptor) => {
      const fields = sampleFields(descriptor);
      const built = descriptor.build(fields);
      expect(built.name).toBe(descriptor.name);
      if (descriptor.dataField !== undefined)
        expect(built.data).toEqual(fields[descriptor.dataField]);
      else expect(built.data).toEqual(fields);
      // Every required field is enforced.
      for (const field of descriptor.fields.filter((entry) => entry.required)) {
        const { [field.name]: _dropped, ...rest } = fields;
        expect(() => descriptor.build(rest)).toThrow(
          new RegExp(`${descriptor.name}\\(input\\): ${field.name}`),
        );
      }
    },
  );

  it('builds through the same checks as the builders', () => {
    expect(guardrailType.build({ rule: 'No PII' })).toEqual(core.guardrail('No PII'));
    expect(() => identityType.build({})).toThrow(/expected at least one of name or role/);
    expect(() => glossaryType.build({ entries: {} })).toThrow(/expected at least one entry/);
    expect(() => policyType.build({ rule: 'x', policies: [core.hint('no')] })).toThrow(
      /policies\[0\]: expected a policy fragment or a non-empty string, received a "hint" fragment/,
    );
  });

  it('is reached through builtinFragmentDescriptors, not one export per type', () => {
    expect('hintType' in core).toBe(false);
    expect(builtinFragmentDescriptors.find((type) => type.name === 'guardrail')).toBe(
      guardrailType,
    );
  });

  it('is frozen, so no one can change a built-in type at run time', () => {
    expect(Object.isFrozen(builtinFragmentDescriptors)).toBe(true);
    expect(Object.isFrozen(termType)).toBe(true);
    expect(Object.isFrozen(termType.fields)).toBe(true);
  });
});
