/**
 * A value's kind for serialization messages: `number`, `array`, `null`, `object`, and for class
 * instances `an instance of Date` (a serialized fragment holds plain JSON only, so naming the class
 * says what to convert). fragments-core's `describeValue` is the plain `typeof` form.
 */
export function describeKind(value: unknown): string {
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
