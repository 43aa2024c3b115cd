/** The text parts of a message, joined (other parts, such as tool calls, left out). */
export function textOf(parts: readonly unknown[]): string {
  return parts
    .map((part) =>
      typeof part === 'object' && part !== null && (part as { type?: string }).type === 'text'
        ? String((part as { text?: unknown }).text ?? '')
        : '',
    )
    .join('');
}
