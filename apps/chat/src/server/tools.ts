import { type InferUITools, type Tool, tool, type UIDataTypes, type UIMessage } from 'ai';
import { z } from 'zod';

/** The app's server-side tools (the mock model calls `getWeather` for any text with "weather"). */
// Typed explicitly: AI SDK 7's inferred tool type names provider types a declaration cannot reach.
export const chatTools: {
  getWeather: Tool<{ city: string }, { city: string; temperatureC: number; sky: string }>;
  askForConfirmation: Tool<{ question: string }, { confirmed: boolean }>;
} = {
  getWeather: tool({
    description: 'The current weather in a city.',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => ({ city, temperatureC: 18, sky: 'clear' }),
  }),
  /** A client-side tool: no `execute`; the page (or test client) answers it. */
  askForConfirmation: tool({
    description: 'Ask the user to confirm before going on.',
    inputSchema: z.object({ question: z.string() }),
    outputSchema: z.object({ confirmed: z.boolean() }),
  }),
};

/** Metadata the client may attach to its messages (checked by the AI SDK on every request). */
export const messageMetadataSchema = z
  .object({ sentAt: z.number().optional(), tag: z.string().optional() })
  .strict()
  .optional();

/** The app's UI message: its metadata and tools carried through the types. */
export type ChatUIMessage = UIMessage<
  z.infer<typeof messageMetadataSchema>,
  UIDataTypes,
  InferUITools<typeof chatTools>
>;
