import type { StoredMessage } from '@ctxgraph/fragments-core';

/** How much of a tool call's input or output a message's text shows. */
const TOOL_PAYLOAD_CHARACTERS = 200;

function shortJson(value: unknown): string {
  let text: string;
  try {
    text = typeof value === 'string' ? value : (JSON.stringify(value) ?? '');
  } catch {
    text = '';
  }
  return text.length > TOOL_PAYLOAD_CHARACTERS
    ? `${text.slice(0, TOOL_PAYLOAD_CHARACTERS)}…`
    : text;
}

/**
 * A stored message as text for a model: its text parts, each tool call in one line (name, input
 * and output, shortened), and the kind of every other part in brackets. Reasoning, metadata and
 * provider options are left out. Stored parts are read as untrusted shapes: a part that is not an
 * object is skipped.
 */
export function messageText(message: StoredMessage): string {
  const lines: string[] = [];
  for (const part of message.parts) {
    if (typeof part !== 'object' || part === null) continue;
    const { type } = part as { type?: unknown };
    if (typeof type !== 'string') continue;
    const fields = part as Record<string, unknown>;
    if (type === 'text') {
      if (typeof fields.text === 'string') lines.push(fields.text);
    } else if (type === 'reasoning' || type === 'step-start') {
      // Not part of what was said.
    } else if (type.startsWith('tool-') || type === 'dynamic-tool') {
      const name = type === 'dynamic-tool' ? String(fields.toolName ?? 'tool') : type.slice(5);
      const output =
        fields.output !== undefined
          ? ` → ${shortJson(fields.output)}`
          : typeof fields.errorText === 'string'
            ? ` → error: ${shortJson(fields.errorText)}`
            : '';
      lines.push(`[tool ${name}(${shortJson(fields.input)})${output}]`);
    } else if (type === 'file') {
      lines.push(`[file ${typeof fields.mediaType === 'string' ? fields.mediaType : ''}]`);
    } else {
      lines.push(`[${type.slice(0, 60)}]`);
    }
  }
  return lines.join('\n');
}
