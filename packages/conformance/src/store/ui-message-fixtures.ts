import type { StoredMessage } from '@ctxgraph/fragments-core';

// Written by hand after the AI SDK 6 `UIMessage` part types, so that a store is proven against
// every shape a real app persists: each part kind, each tool state, provider metadata, and
// message metadata with every JSON value kind. The package's own tests check that the AI SDK's
// `validateUIMessages` accepts every fixture.

const providerMetadata = {
  openai: { itemId: 'item_01', reasoningEncryptedContent: null },
  anthropic: { cacheControl: { type: 'ephemeral' } },
};

/** A user turn: text, an inline image (data URL), a hosted file, and message metadata. */
const userWithFiles: StoredMessage = {
  id: 'fixture-user-files',
  role: 'user',
  metadata: {
    createdAt: 1_767_225_600_000,
    client: { name: 'web', version: '2.3.1' },
    tags: ['draft', 'pinned'],
  },
  parts: [
    {
      type: 'text',
      text: 'What is in this picture, and how does it compare with the attached report?',
    },
    {
      type: 'file',
      mediaType: 'image/png',
      filename: 'pixel.png',
      url: 'data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=',
    },
    {
      type: 'file',
      mediaType: 'application/pdf',
      filename: 'report Q3 (final).pdf',
      url: 'https://files.example.com/reports/q3.pdf?signature=a%2Fb&expires=1767225600',
    },
  ],
};

/** An assistant turn with every non-tool part kind. */
const assistantEveryPart: StoredMessage = {
  id: 'fixture-assistant-parts',
  role: 'assistant',
  metadata: {
    model: 'gpt-5-mini',
    usage: { inputTokens: 1204, outputTokens: 388, cost: 0.00071 },
    finishReason: 'stop',
  },
  parts: [
    { type: 'step-start' },
    {
      type: 'reasoning',
      id: 'reasoning-1',
      text: 'The image is a single pixel; the report is a PDF I can cite.',
      state: 'done',
      providerMetadata,
    },
    {
      type: 'text',
      text: 'The picture is a single transparent pixel.',
      state: 'done',
      providerMetadata,
    },
    { type: 'text', text: 'Still streaming…', state: 'streaming' },
    { type: 'reasoning', text: 'Thinking further', state: 'streaming' },
    {
      type: 'source-url',
      sourceId: 'source-1',
      url: 'https://example.com/articles/pixels',
      title: 'All about pixels',
      providerMetadata,
    },
    { type: 'source-url', sourceId: 'source-2', url: 'https://example.com/no-title' },
    {
      type: 'source-document',
      sourceId: 'source-3',
      mediaType: 'application/pdf',
      title: 'Quarterly report',
      filename: 'q3.pdf',
    },
    { type: 'source-document', sourceId: 'source-4', mediaType: 'text/plain', title: 'Notes' },
    { type: 'file', mediaType: 'image/svg+xml', url: 'https://example.com/chart.svg' },
    {
      type: 'data-weather',
      id: 'weather-1',
      data: { city: 'Lisbon', celsius: 21.5, sunny: true, hourly: [19, 20, 21.5] },
    },
    { type: 'data-progress', data: { step: 2, of: 3, label: null } },
    { type: 'data-note', data: 'a plain string payload' },
    { type: 'step-start' },
    { type: 'text', text: 'Done.' },
  ],
};

/** An assistant turn with a static tool in each of its states. */
const assistantToolStates: StoredMessage = {
  id: 'fixture-assistant-tools',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    {
      type: 'tool-getWeather',
      toolCallId: 'call-1',
      state: 'input-streaming',
      input: { city: 'Lis' },
    },
    { type: 'tool-getWeather', toolCallId: 'call-2', state: 'input-streaming' },
    {
      type: 'tool-getWeather',
      toolCallId: 'call-3',
      state: 'input-available',
      input: { city: 'Lisbon', unit: 'celsius' },
      callProviderMetadata: providerMetadata,
    },
    {
      type: 'tool-getWeather',
      toolCallId: 'call-4',
      state: 'output-available',
      input: { city: 'Lisbon', unit: 'celsius' },
      output: { celsius: 21.5, conditions: ['sunny', 'light wind'], station: null },
      providerExecuted: false,
    },
    {
      type: 'tool-getWeather',
      toolCallId: 'call-5',
      state: 'output-available',
      input: { city: 'Porto' },
      output: 'preliminary figure',
      preliminary: true,
    },
    {
      type: 'tool-searchDocs',
      toolCallId: 'call-6',
      state: 'output-error',
      input: { query: 'pixels' },
      errorText: 'The search service timed out after 30 s.',
    },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call-7',
      state: 'approval-requested',
      input: { path: '/tmp/report.pdf' },
      approval: { id: 'approval-1' },
    },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call-8',
      state: 'approval-responded',
      input: { path: '/tmp/report.pdf' },
      approval: { id: 'approval-2', approved: true, reason: 'The user confirmed.' },
    },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call-9',
      state: 'output-denied',
      input: { path: '/etc/passwd' },
      approval: { id: 'approval-3', approved: false, reason: 'Outside the workspace.' },
    },
    { type: 'step-start' },
    { type: 'text', text: 'It is sunny in Lisbon.' },
  ],
};

/** An assistant turn with dynamic tools (tools not known at compile time) in each main state. */
const assistantDynamicTools: StoredMessage = {
  id: 'fixture-assistant-dynamic-tools',
  role: 'assistant',
  parts: [
    {
      type: 'dynamic-tool',
      toolName: 'mcp.lookup',
      toolCallId: 'dyn-1',
      state: 'input-streaming',
      input: { term: 'ctx' },
    },
    {
      type: 'dynamic-tool',
      toolName: 'mcp.lookup',
      toolCallId: 'dyn-2',
      state: 'input-available',
      input: { term: 'ctxgraph' },
    },
    {
      type: 'dynamic-tool',
      toolName: 'mcp.lookup',
      toolCallId: 'dyn-3',
      state: 'output-available',
      input: { term: 'ctxgraph' },
      output: { hits: [{ title: 'ctxgraph', score: 0.93 }], total: 1 },
      title: 'Lookup',
    },
    {
      type: 'dynamic-tool',
      toolName: 'mcp.lookup',
      toolCallId: 'dyn-4',
      state: 'output-error',
      input: { term: '' },
      errorText: 'term must not be empty',
    },
  ],
};

/** A system message (text parts only). */
const systemText: StoredMessage = {
  id: 'fixture-system',
  role: 'system',
  parts: [{ type: 'text', text: 'You are terse.\nAnswer in one sentence.' }],
};

/** A user turn whose metadata holds every JSON value kind, nested. */
const userJsonMetadata: StoredMessage = {
  id: 'fixture-user-json-metadata',
  role: 'user',
  metadata: {
    string: 'quote " backslash \\ newline \n tab \t',
    integer: 42,
    negative: -17,
    float: 0.1,
    tiny: 1.5e-7,
    largeSafeInteger: 9_007_199_254_740_991,
    booleans: [true, false],
    nothing: null,
    emptyObject: {},
    emptyArray: [],
    nested: { level1: { level2: { level3: [1, [2, [3, { four: 4 }]]] } } },
  },
  parts: [
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal placeholder is the point of this text.
    { type: 'text', text: "'; DROP TABLE messages; -- </script> <![CDATA[ ]]> ${not a template}" },
  ],
};

/** An assistant turn with no parts (a reply that was cut off before it produced anything). */
const assistantEmpty: StoredMessage = {
  id: 'fixture-assistant-empty',
  role: 'assistant',
  parts: [],
};

/**
 * AI SDK `UIMessage`s that together use every part kind (text, reasoning, static tool parts in
 * every state, dynamic-tool, file, source-url, source-document, data-*, step-start) and message
 * metadata with every JSON value kind. Ids are unique within the list. A store must give each
 * back deep-equal to what it was given; codecs and engine tests may reuse them.
 */
export const uiMessageFixtures: readonly StoredMessage[] = deepFreeze([
  systemText,
  userWithFiles,
  assistantEveryPart,
  userJsonMetadata,
  assistantToolStates,
  assistantDynamicTools,
  assistantEmpty,
]);

// Frozen all the way down, so a test (or a store) that mutates a fixture fails loudly instead of
// changing what every later test compares against.
function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const entry of Object.values(value)) deepFreeze(entry);
  }
  return value;
}
