// @vitest-environment jsdom
// The branch picker's parts rendered by React under jsdom, over a message's versions as the hook
// gives them (`{ index, count, select }`), with `select` recording what was asked.
import { act, type ReactNode, useState } from 'react';
import { createRoot, type Root } from 'react-dom/client';
import { afterEach, describe, expect, it } from 'vitest';
import { BranchPicker, BranchPickerLabel, BranchPickerNext } from './branch-picker';
import type { MessageVersions } from './use-ctxgraph-chat';

(globalThis as { IS_REACT_ACT_ENVIRONMENT?: boolean }).IS_REACT_ACT_ENVIRONMENT = true;

const roots: Root[] = [];
afterEach(async () => {
  for (const root of roots.splice(0)) await act(async () => root.unmount());
  document.body.innerHTML = '';
});

/** A picker over `count` versions that moves to the version selected once `select` settles. */
function Versions({ count, start, asked }: { count: number; start: number; asked: number[] }) {
  const [index, setIndex] = useState(start);
  const versions: MessageVersions = {
    index,
    count,
    select: async (next) => {
      asked.push(next);
      setIndex(next);
    },
  };
  return <BranchPicker versions={versions} className="picker" />;
}

async function render(element: ReactNode): Promise<HTMLElement> {
  const container = document.createElement('div');
  document.body.append(container);
  const root = createRoot(container);
  roots.push(root);
  await act(async () => root.render(element));
  return container;
}

const key = (element: Element, name: string) =>
  act(async () => {
    element.dispatchEvent(new KeyboardEvent('keydown', { key: name, bubbles: true }));
  });

describe('BranchPicker', () => {
  it('renders nothing for a message with one version', async () => {
    const container = await render(<BranchPicker versions={undefined} />);
    expect(container.innerHTML).toBe('');
  });

  it('names its parts, marks the version shown, and steps with the buttons', async () => {
    const asked: number[] = [];
    const container = await render(<Versions count={3} start={1} asked={asked} />);
    const group = container.querySelector('[role="group"]') as HTMLElement;
    expect(group.getAttribute('aria-label')).toBe('Versions');
    expect(group.className).toBe('picker');
    expect(group.dataset).toMatchObject({ index: '2', count: '3' });
    const label = group.querySelector('[role="status"]');
    expect(label?.textContent).toBe('2 / 3');
    expect(label?.getAttribute('aria-label')).toBe('Version 2 of 3');
    const previous = group.querySelector('[aria-label="Previous version"]') as HTMLButtonElement;
    const next = group.querySelector('[aria-label="Next version"]') as HTMLButtonElement;
    expect(previous.type).toBe('button');

    await act(async () => next.click());
    expect(asked).toEqual([2]);
    expect(label?.textContent).toBe('3 / 3');
    expect(next.disabled).toBe(true);
    expect(next.hasAttribute('data-disabled')).toBe(true);
    await act(async () => previous.click());
    await act(async () => previous.click());
    expect(asked).toEqual([2, 1, 0]);
    expect(previous.disabled).toBe(true);
    expect(label?.getAttribute('aria-label')).toBe('Version 1 of 3');
  });

  it('answers the arrow keys, Home and End, and ignores a step past either end', async () => {
    const asked: number[] = [];
    const container = await render(<Versions count={4} start={0} asked={asked} />);
    const group = container.querySelector('[role="group"]') as HTMLElement;
    await key(group, 'ArrowLeft');
    expect(asked).toEqual([]);
    await key(group, 'ArrowRight');
    await key(group, 'End');
    await key(group, 'ArrowRight');
    await key(group, 'Home');
    expect(asked).toEqual([1, 3, 0]);
    expect(group.dataset.index).toBe('1');
  });

  it('waits for a switch (pending, buttons off) and reports one that failed', async () => {
    let finish: (() => void) | undefined;
    const errors: unknown[] = [];
    const versions: MessageVersions = {
      index: 0,
      count: 2,
      select: () =>
        new Promise<void>((_resolve, reject) => {
          finish = () => reject(new Error('version gone'));
        }),
    };
    const container = await render(
      <BranchPicker versions={versions} onSelectError={(error) => errors.push(error)} />,
    );
    const group = container.querySelector('[role="group"]') as HTMLElement;
    const next = group.querySelector('[aria-label="Next version"]') as HTMLButtonElement;
    await act(async () => next.click());
    expect(group.hasAttribute('data-pending')).toBe(true);
    expect(group.getAttribute('aria-busy')).toBe('true');
    expect(next.disabled).toBe(true);
    await act(async () => finish?.());
    expect(group.hasAttribute('data-pending')).toBe(false);
    expect(String(errors[0])).toBe('Error: version gone');
  });

  it('takes the app’s own parts and labels', async () => {
    const versions: MessageVersions = { index: 0, count: 2, select: async () => {} };
    const container = await render(
      <BranchPicker versions={versions}>
        <BranchPickerLabel>first of two</BranchPickerLabel>
        <BranchPickerNext className="next">Newer</BranchPickerNext>
      </BranchPicker>,
    );
    expect(container.querySelector('[role="status"]')?.textContent).toBe('first of two');
    expect(container.querySelector('button.next')?.textContent).toBe('Newer');
    expect(container.querySelector('[aria-label="Previous version"]')).toBeNull();
  });

  it('says where a part belongs when it is used outside a picker', async () => {
    const container = document.createElement('div');
    const root = createRoot(container);
    const failures: unknown[] = [];
    const original = console.error;
    console.error = () => {};
    try {
      await act(async () => {
        try {
          root.render(<BranchPickerNext />);
        } catch (error) {
          failures.push(error);
        }
      });
    } catch (error) {
      failures.push(error);
    } finally {
      console.error = original;
    }
    expect(String(failures[0])).toContain('<BranchPickerNext> must be inside a <BranchPicker>');
  });
});
