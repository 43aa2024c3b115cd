// @vitest-environment jsdom
// The page's presentational parts rendered by React DOM under jsdom, from plain props.
import { act } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { BranchPicker } from './branch-picker';
import { ContextGauge } from './context-gauge';
import { renderMarkdown } from './markdown';
import { OutcomeMarker } from './outcome-marker';
import { ConfirmCard } from './tool-cards';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const mounted: Root[] = [];
afterEach(async () => {
  for (const root of mounted.splice(0)) await act(async () => root.unmount());
  document.body.replaceChildren();
});

async function render(element: React.ReactElement): Promise<HTMLElement> {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  mounted.push(root);
  await act(async () => root.render(element));
  return container;
}

const button = (container: HTMLElement, name: string): HTMLButtonElement => {
  const found = [...container.querySelectorAll('button')].find(
    (candidate) => (candidate.getAttribute('aria-label') ?? candidate.textContent) === name,
  );
  if (found === undefined) throw new Error(`No button named ${name}.`);
  return found;
};

describe('ContextGauge', () => {
  it('renders nothing without a token count or a cost', async () => {
    const container = await render(<ContextGauge windowTokens={128_000} />);
    expect(container.innerHTML).toBe('');
  });

  it('shows the tokens used of the window as a meter and a share, and the cost', async () => {
    const container = await render(
      <ContextGauge usedTokens={96_000} windowTokens={128_000} costUsd={0.0042} />,
    );
    expect(container.querySelector('[data-testid="context-tokens"]')?.textContent).toBe(
      '96K / 128K tokens (75%)',
    );
    const meter = container.querySelector('meter');
    expect(meter?.getAttribute('aria-label')).toBe('Context used');
    expect(Number(meter?.getAttribute('value'))).toBe(0.75);
    expect(
      container.querySelector('[data-testid="context-gauge"]')?.getAttribute('data-level'),
    ).toBe('mid');
    expect(container.querySelector('[data-testid="context-cost"]')?.textContent).toBe('$0.0042');
  });

  it('shows a cost alone, in cents from a cent up', async () => {
    const container = await render(<ContextGauge costUsd={1.5} />);
    expect(container.querySelector('[data-testid="context-tokens"]')).toBeNull();
    expect(container.querySelector('[data-testid="context-cost"]')?.textContent).toBe('$1.50');
  });
});

describe('BranchPicker', () => {
  it('marks the version on screen and opens the previous and next ones', async () => {
    const picked: number[] = [];
    const container = await render(
      <BranchPicker index={1} count={3} onSelect={(index) => picked.push(index)} />,
    );
    const group = container.querySelector('[data-testid="versions"]');
    expect(group?.getAttribute('role')).toBe('group');
    expect(group?.getAttribute('aria-label')).toBe('Version 2 of 3');
    expect(container.querySelector('[data-testid="version-position"]')?.textContent).toBe('2 / 3');
    await act(async () => button(container, 'Previous version').click());
    await act(async () => button(container, 'Next version').click());
    expect(picked).toEqual([0, 2]);
  });

  it('cannot go before the first version or after the last', async () => {
    const first = await render(<BranchPicker index={0} count={2} onSelect={() => {}} />);
    expect(button(first, 'Previous version').disabled).toBe(true);
    expect(button(first, 'Next version').disabled).toBe(false);
    const last = await render(<BranchPicker index={1} count={2} onSelect={() => {}} />);
    expect(button(last, 'Next version').disabled).toBe(true);
  });
});

describe('ConfirmCard', () => {
  it('answers with Confirm or Decline, and shows the answer in place of the buttons', async () => {
    const answers: boolean[] = [];
    const container = await render(
      <ConfirmCard
        question="Place the order?"
        answer={undefined}
        onAnswer={(yes) => answers.push(yes)}
      />,
    );
    expect(container.querySelector('.confirm-question')?.textContent).toBe('Place the order?');
    await act(async () => button(container, 'Decline').click());
    await act(async () => button(container, 'Confirm').click());
    expect(answers).toEqual([false, true]);

    const answered = await render(
      <ConfirmCard question="Place the order?" answer={true} onAnswer={() => {}} />,
    );
    expect(answered.querySelectorAll('button')).toHaveLength(0);
    expect(answered.querySelector('[data-testid="confirm-answer"]')?.textContent).toBe(
      '✓ Confirmed',
    );
  });

  it('cannot be answered while its question streams or while disabled', async () => {
    const streaming = await render(
      <ConfirmCard question={undefined} answer={undefined} onAnswer={() => {}} />,
    );
    expect(button(streaming, 'Confirm').disabled).toBe(true);
    const disabled = await render(
      <ConfirmCard question="Go?" answer={undefined} disabled onAnswer={() => {}} />,
    );
    expect(button(disabled, 'Decline').disabled).toBe(true);
  });
});

describe('renderMarkdown', () => {
  it('renders Markdown (GitHub flavoured, line breaks kept)', () => {
    expect(renderMarkdown('**bold** and `code`\nnext')).toBe(
      '<p><strong>bold</strong> and <code>code</code><br>next</p>',
    );
    expect(renderMarkdown('- one\n- two')).toContain('<li>one</li>');
  });

  it("shows the model's HTML as text, and drops script links", () => {
    const html = renderMarkdown('<img src=x onerror="alert(1)"> <b>bold?</b>');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b>');
    expect(html).toContain('&lt;img src=x onerror="alert(1)"&gt;');
    const link = renderMarkdown('[click](javascript:alert(1))');
    expect(link).not.toContain('javascript:');
  });

  it('opens links in a new tab without handing it the page', () => {
    expect(renderMarkdown('[docs](https://example.com)')).toBe(
      '<p><a href="https://example.com" target="_blank" rel="noopener noreferrer">docs</a></p>',
    );
  });
});

describe('OutcomeMarker', () => {
  it('marks a stopped reply and an interrupted one, each with what was kept', async () => {
    const stopped = await render(<OutcomeMarker outcome="aborted" />);
    const stoppedMark = stopped.querySelector('[data-testid="outcome"]');
    expect(stoppedMark?.textContent).toBe('stopped');
    expect(stoppedMark?.getAttribute('title')).toContain('stopped before it finished');
    const interrupted = await render(<OutcomeMarker outcome="interrupted" />);
    const interruptedMark = interrupted.querySelector('[data-testid="outcome"]');
    expect(interruptedMark?.textContent).toBe('interrupted');
    expect(interruptedMark?.getAttribute('data-outcome')).toBe('interrupted');
    expect(interruptedMark?.getAttribute('title')).toContain('cut off');
  });
});
