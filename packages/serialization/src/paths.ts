// Paths in error messages read like property access in code: `policies[1].rule`, `entries["a b"]`.

const identifier = /^[A-Za-z_$][\w$]*$/;

/** Appends an array index or object key to a readable path. */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (identifier.test(segment)) return base === '' ? segment : `${base}.${segment}`;
  return `${base}[${JSON.stringify(segment)}]`;
}

/** Puts `base` in front of a path that is relative to it (as builders and nested calls report). */
export function prefixPath(base: string, path: string): string {
  if (base === '') return path;
  if (path === '') return base;
  return path.startsWith('[') ? `${base}${path}` : `${base}.${path}`;
}

/** A short description of a value's kind for messages: `number`, `array`, `null`, `a Date`. */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') {
    const prototype: unknown = Object.getPrototypeOf(value);
    if (prototype === Object.prototype || prototype === null) return 'object';
    const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
    return typeof name === 'string' && name !== '' ? `an instance of ${name}` : 'object';
  }
  return typeof value;
}
