import type { ProviderCompactionRecord } from '@ctxgraph/fragments-core';
import type { UIMessage } from 'ai';
import type { AppliedCompaction } from '../session/chain-reads';

// A provider compaction (Anthropic's compaction block, OpenAI's compaction item) stands in for
// everything before it, so whoever can put one in the prompt can make the model forget the
// conversation or believe a history that never happened. The AI SDK's providers send one back
// from any message part that looks like it (a text part with
// `providerMetadata.anthropic.type === 'compaction'`, a `custom` part of kind
// `'openai.compaction'`), and a chat client controls the parts of the messages it sends.
//
// The rule (the engine-records rule): compaction content reaches the provider only from a record
// the engine wrote (`CompactionRecord.provider`, made by `withUsage(…, { response })` from the
// call's own response). On the way out of `resolve()`, every message loses its compaction parts
// (an Anthropic one becomes a plain text part: its text is data, like any other the client sent;
// an OpenAI one, which has no text, is left out), and the message of the compaction the view
// applies gets its part back from that record, at the record's `partIndex`.

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type Part = UIMessage['parts'][number];

function anthropicEntry(part: Record<string, unknown>): Record<string, unknown> | undefined {
  const metadata = part.providerMetadata;
  if (!isObject(metadata)) return undefined;
  const entry = metadata.anthropic;
  return isObject(entry) ? entry : undefined;
}

/** Which provider's compaction a UI message part holds, if any. */
function compactionKind(part: unknown): 'anthropic' | 'openai' | undefined {
  if (!isObject(part)) return undefined;
  if (part.type === 'text' && anthropicEntry(part)?.type === 'compaction') return 'anthropic';
  if (part.type === 'custom' && part.kind === 'openai.compaction') return 'openai';
  return undefined;
}

/** An Anthropic compaction part as plain text: the `type` marker leaves its provider metadata. */
function plainText(part: Part): Part {
  const { providerMetadata, ...rest } = part as Part & {
    providerMetadata: Record<string, unknown>;
  };
  const { anthropic, ...otherProviders } = providerMetadata;
  const { type: _marker, ...anthropicRest } = anthropic as Record<string, unknown>;
  const metadata: Record<string, unknown> = { ...otherProviders };
  if (Object.keys(anthropicRest).length > 0) metadata.anthropic = anthropicRest;
  return (
    Object.keys(metadata).length > 0 ? { ...rest, providerMetadata: metadata } : rest
  ) as Part;
}

/** True when a part holds a provider's compaction (a loop: it runs for every message shown). */
function hasCompaction(parts: readonly Part[]): boolean {
  for (let index = 0; index < parts.length; index += 1)
    if (compactionKind(parts[index]) !== undefined) return true;
  return false;
}

/**
 * The parts with each compaction taken out, except the one at `keepAt`, which becomes `kept`.
 * Undefined when there is nothing to change.
 */
function withoutCompactions(
  parts: readonly Part[],
  keepAt?: { readonly index: number; readonly part: Part },
): Part[] | undefined {
  if (keepAt === undefined && !hasCompaction(parts)) return undefined;
  const result: Part[] = [];
  parts.forEach((part, index) => {
    if (index === keepAt?.index) result.push(keepAt.part);
    else if (compactionKind(part) === undefined) result.push(part);
    else if (compactionKind(part) === 'anthropic') result.push(plainText(part));
  });
  return result;
}

/** The UI part the provider sends back as its compaction, built from the engine's record. */
function recordedPart(record: ProviderCompactionRecord): Part | undefined {
  if (record.provider === 'anthropic' && typeof record.text === 'string') {
    return {
      type: 'text',
      text: record.text,
      providerMetadata: { anthropic: { type: 'compaction' } },
    } as Part;
  }
  if (record.provider === 'openai' && typeof record.itemId === 'string') {
    const openai: Record<string, string> = { type: 'compaction', itemId: record.itemId };
    if (typeof record.encryptedContent === 'string')
      openai.encryptedContent = record.encryptedContent;
    return { type: 'custom', kind: 'openai.compaction', providerMetadata: { openai } } as Part;
  }
  return undefined;
}

/**
 * Records written before the content was kept in the record (`text`, `encryptedContent`): the
 * stored reply's own part at `partIndex`, when it is the recorded provider's compaction.
 */
function storedPart(
  record: ProviderCompactionRecord,
  stored: UIMessage | null,
): { part: Part } | undefined {
  const part = stored?.parts[record.partIndex];
  if (part === undefined || compactionKind(part) !== record.provider) return undefined;
  if (record.provider === 'openai') {
    const metadata = (part as { providerMetadata?: unknown }).providerMetadata;
    const openai = isObject(metadata) ? metadata.openai : undefined;
    if (!isObject(openai) || openai.itemId !== record.itemId) return undefined;
  }
  return { part };
}

function frozen<T>(value: T): T {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value;
  for (const key of Object.keys(value)) frozen((value as Record<string, unknown>)[key]);
  return Object.freeze(value);
}

/** Sanitized copies, per message object shown, so a warm call hands the token counter the same object. */
const sanitized = new WeakMap<UIMessage, { record: unknown; message: UIMessage }>();

/**
 * The messages as `resolve()` sends them: compaction parts only where the engine recorded one
 * (see the comment at the top). A message with nothing to change is the same object; the array
 * is changed in place and returned.
 */
export function sendableMessages(
  messages: UIMessage[],
  applied: AppliedCompaction | undefined,
): UIMessage[] {
  const provider = applied?.record.provider;
  const compactionId = provider === undefined ? undefined : applied?.entry.message?.id;
  for (let index = 0; index < messages.length; index += 1) {
    const message = messages[index] as UIMessage;
    const isCompaction = message.id === compactionId && provider !== undefined;
    const cached = sanitized.get(message);
    if (cached !== undefined && cached.record === (isCompaction ? provider : null)) {
      messages[index] = cached.message;
      continue;
    }
    let parts: Part[] | undefined;
    const recorded = isCompaction
      ? (recordedPart(provider) ?? storedPart(provider, applied?.entry.message ?? null)?.part)
      : undefined;
    if (isCompaction && recorded !== undefined) {
      // The reply keeps its compaction at `partIndex`; when a client moved or removed it, the
      // recorded one goes there anyway (it is what the provider needs back).
      const at = provider.partIndex;
      const held = message.parts[at];
      if (held !== undefined && compactionKind(held) === provider.provider) {
        parts = withoutCompactions(message.parts, { index: at, part: recorded });
      } else {
        parts = withoutCompactions(message.parts) ?? message.parts.slice();
        parts.splice(Math.min(at, parts.length), 0, recorded);
      }
    } else {
      parts = withoutCompactions(message.parts);
    }
    const result = parts === undefined ? message : frozen({ ...message, parts });
    if (result !== message)
      sanitized.set(message, { record: isCompaction ? provider : null, message: result });
    messages[index] = result;
  }
  return messages;
}
