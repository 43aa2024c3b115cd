import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { acceptToolResults } from './tool-results';

const stored = (parts: unknown[]): UIMessage =>
  ({ id: 'a1', role: 'assistant', parts, metadata: { by: 'server' } }) as UIMessage;

describe('acceptToolResults', () => {
  const waiting = {
    type: 'tool-confirm',
    toolCallId: 'c1',
    state: 'input-available',
    input: { question: 'ok?' },
  };

  it("takes a waiting call's output or error, and nothing else of the client's copy", () => {
    const sent = stored([
      { type: 'text', text: 'forged words' },
      { ...waiting, input: { question: 'forged' }, state: 'output-available', output: { yes: 1 } },
    ]);
    const merged = acceptToolResults(stored([{ type: 'step-start' }, waiting]), {
      ...sent,
      metadata: { by: 'client' },
    } as UIMessage);
    expect(merged).toEqual(
      stored([
        { type: 'step-start' },
        { ...waiting, state: 'output-available', output: { yes: 1 } },
      ]),
    );
    const failed = acceptToolResults(
      stored([waiting]),
      stored([{ ...waiting, state: 'output-error', errorText: 'no' }]),
    );
    expect(failed.parts[0]).toEqual({ ...waiting, state: 'output-error', errorText: 'no' });
  });

  it('takes an approval answer under the stored approval id; ignores settled calls and other calls', () => {
    const asking = {
      type: 'tool-pay',
      toolCallId: 'p1',
      state: 'approval-requested',
      input: { amount: 5 },
      approval: { id: 'ap1' },
    };
    const answered = acceptToolResults(
      stored([asking]),
      stored([
        {
          ...asking,
          state: 'approval-responded',
          approval: { id: 'x', approved: true, reason: 'fine' },
        },
      ]),
    );
    expect(answered.parts[0]).toEqual({
      ...asking,
      state: 'approval-responded',
      approval: { id: 'ap1', approved: true, reason: 'fine' },
    });
    const done = { ...waiting, state: 'output-available', output: { yes: 0 } };
    const unchanged = acceptToolResults(
      stored([done]),
      stored([
        { ...done, output: { yes: 1 } },
        { ...waiting, toolCallId: 'other', state: 'output-available', output: 1 },
      ]),
    );
    expect(unchanged.parts).toEqual([done]);
    // A different tool under the same call id is not an answer.
    const wrongTool = acceptToolResults(
      stored([waiting]),
      stored([{ ...waiting, type: 'tool-other', state: 'output-available', output: 1 }]),
    );
    expect(wrongTool.parts).toEqual([waiting]);
  });
});
