/** Sets a key even when it is `__proto__`, which plain assignment would turn into a prototype change. */
export function defineEntry<T>(target: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(target, key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
}
