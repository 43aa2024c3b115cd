import { convertToModelMessages, type ModelMessage, type UIMessage } from 'ai';

/** Options of {@link toModelMessages}, passed to the AI SDK's `convertToModelMessages`. */
export type ToModelMessagesOptions = NonNullable<Parameters<typeof convertToModelMessages>[1]>;

/**
 * Turns resolved `UIMessage`s into the AI SDK's model messages, the form `generateText` and
 * `streamText` take as `messages`.
 *
 * @example
 * ```ts
 * const { systemPrompt, messages } = await engine.resolve({ renderer });
 * await generateText({ model, system: systemPrompt, messages: await toModelMessages(messages) });
 * ```
 */
export function toModelMessages(
  messages: readonly UIMessage[],
  options: ToModelMessagesOptions = {},
): Promise<ModelMessage[]> {
  return convertToModelMessages(
    messages.map(({ id: _id, ...rest }) => rest),
    options,
  );
}
