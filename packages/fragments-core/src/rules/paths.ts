// Paths and value kinds in error messages, shared by every package that reports a problem at a
// place in a value: paths read like property access in code (`policies[1].rule`, `entries["a b"]`).

const identifier = /^[A-Za-z_$][\w$]*$/;

/**
 * Appends an array index or an object key to a readable path.
 *
 * @example
 * joinPath('policies', 1); // 'policies[1]'
 * joinPath('policies[1]', 'rule'); // 'policies[1].rule'
 * joinPath('entries', 'a b'); // 'entries["a b"]'
 */
export function joinPath(base: string, segment: string | number): string {
  if (typeof segment === 'number') return `${base}[${segment}]`;
  if (identifier.test(segment)) return base === '' ? segment : `${base}.${segment}`;
  return `${base}[${JSON.stringify(segment)}]`;
}

/**
 * Puts `base` in front of a path that is relative to it (as builders and nested checks report).
 *
 * @example
 * prefixPath('message', 'parts[0]'); // 'message.parts[0]'
 * prefixPath('message', '[0]'); // 'message[0]'
 * prefixPath('message', ''); // 'message'
 */
export function prefixPath(base: string, path: string): string {
  if (base === '') return path;
  if (path === '') return base;
  return path.startsWith('[') ? `${base}${path}` : `${base}.${path}`;
}

/** A short description of a value's type for error messages: `array`, `null`, `number`, … */
export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}
