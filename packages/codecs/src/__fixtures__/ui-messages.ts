import type { UIMessage } from 'ai';

/** One assistant message per kind of part, each kind in every state it can be in. */
export const everyPartKind: UIMessage = {
  id: 'every-part',
  role: 'assistant',
  metadata: { model: 'test-model', usage: { inputTokens: 12, outputTokens: 34 } },
  parts: [
    { type: 'step-start' },
    {
      type: 'reasoning',
      text: 'Thinking it through…',
      state: 'done',
      providerMetadata: { test: { signature: 'abc' } },
    },
    { type: 'text', text: 'Here is the weather.', state: 'done' },
    {
      type: 'tool-weather',
      toolCallId: 'call-1',
      state: 'input-streaming',
      input: { city: 'Par' },
    },
    {
      type: 'tool-weather',
      toolCallId: 'call-2',
      state: 'input-available',
      input: { city: 'Paris' },
    },
    {
      type: 'tool-weather',
      toolCallId: 'call-3',
      state: 'output-available',
      input: { city: 'Paris' },
      output: { celsius: 21 },
    },
    {
      type: 'tool-weather',
      toolCallId: 'call-4',
      state: 'output-error',
      input: { city: 'Atlantis' },
      errorText: 'Unknown city',
    },
    {
      type: 'dynamic-tool',
      toolName: 'lookup',
      toolCallId: 'call-5',
      state: 'output-available',
      input: { q: 'x' },
      output: ['y'],
    },
    {
      type: 'file',
      mediaType: 'image/png',
      url: 'data:image/png;base64,iVBORw0KGgo=',
      filename: 'pixel.png',
    },
    {
      type: 'source-url',
      sourceId: 'source-1',
      url: 'https://example.com/weather',
      title: 'Weather',
    },
    {
      type: 'source-document',
      sourceId: 'source-2',
      mediaType: 'application/pdf',
      title: 'Report',
      filename: 'report.pdf',
    },
    { type: 'data-chart', id: 'chart-1', data: { points: [1, 2, 3], label: 'Temperatures' } },
  ],
};
