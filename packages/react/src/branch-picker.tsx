// Unstyled parts of a "2 / 3" switch between the versions of a message (an edited question, a
// regenerated reply). Each part renders one plain element with `data-*` attributes to style it by,
// takes the element's own props, and has an accessible name; the group answers the arrow keys.
import {
  type ButtonHTMLAttributes,
  createContext,
  type HTMLAttributes,
  type KeyboardEvent,
  type ReactNode,
  useContext,
  useState,
} from 'react';
import type { MessageVersions } from './use-ctxgraph-chat';

interface PickerState {
  readonly versions: MessageVersions;
  /** A switch is under way (the buttons wait for it). */
  readonly pending: boolean;
  go(index: number): void;
}

const PickerContext = createContext<PickerState | null>(null);

function usePicker(part: string): PickerState {
  const state = useContext(PickerContext);
  if (state === null) {
    throw new Error(`<${part}> must be inside a <BranchPicker> (it reads the message's versions).`);
  }
  return state;
}

/** Props of {@link BranchPicker}. */
export interface BranchPickerProps extends Omit<HTMLAttributes<HTMLDivElement>, 'children'> {
  /** The message's versions (`versionsOf(message.id)`); nothing renders when undefined. */
  readonly versions: MessageVersions | undefined;
  /**
   * The parts inside.
   * @default <BranchPickerPrevious /> <BranchPickerLabel /> <BranchPickerNext />
   */
  readonly children?: ReactNode;
  /** Told when a switch failed (the version is gone, the server is unreachable). */
  readonly onSelectError?: (error: unknown) => void;
}

/**
 * The switch between a message's versions: a `role="group"` element named "Versions" holding
 * the parts (by default Previous, the "2 / 3" label, Next). ArrowLeft / ArrowRight inside it
 * switch too, Home / End go to the first / last version. `data-index` (1-based), `data-count`
 * and `data-pending` (while a switch loads) are on the element. Renders nothing for a message
 * with one version.
 *
 * @example
 * ```tsx
 * <BranchPicker versions={chat.versionsOf(message.id)} className="picker" />
 * ```
 */
export function BranchPicker({
  versions,
  children,
  onSelectError,
  onKeyDown,
  ...props
}: BranchPickerProps): ReactNode {
  const [pending, setPending] = useState(false);
  if (versions === undefined) return null;
  const go = (index: number): void => {
    if (pending || index < 0 || index >= versions.count || index === versions.index) return;
    setPending(true);
    versions
      .select(index)
      .catch((error: unknown) => onSelectError?.(error))
      .finally(() => setPending(false));
  };
  const keys = (event: KeyboardEvent<HTMLDivElement>): void => {
    onKeyDown?.(event);
    if (event.defaultPrevented) return;
    const target = {
      ArrowLeft: versions.index - 1,
      ArrowRight: versions.index + 1,
      Home: 0,
      End: versions.count - 1,
    }[event.key];
    if (target === undefined) return;
    event.preventDefault();
    go(target);
  };
  return (
    <PickerContext.Provider value={{ versions, pending, go }}>
      {/* biome-ignore lint/a11y/useSemanticElements: a group of controls, not a form fieldset. */}
      <div
        role="group"
        aria-label="Versions"
        data-ctxgraph-branch-picker=""
        data-index={versions.index + 1}
        data-count={versions.count}
        data-pending={pending ? '' : undefined}
        aria-busy={pending || undefined}
        onKeyDown={keys}
        {...props}
      >
        {children ?? (
          <>
            <BranchPickerPrevious />
            <BranchPickerLabel />
            <BranchPickerNext />
          </>
        )}
      </div>
    </PickerContext.Provider>
  );
}

/** Props of the picker's buttons. */
export type BranchPickerButtonProps = ButtonHTMLAttributes<HTMLButtonElement>;

/** A button one version back or forward. */
function StepButton({
  step,
  part,
  fallback,
  children,
  onClick,
  ...props
}: BranchPickerButtonProps & { step: -1 | 1; part: string; fallback: string }): ReactNode {
  const { versions, pending, go } = usePicker(part);
  const target = versions.index + step;
  const disabled = target < 0 || target >= versions.count;
  return (
    <button
      type="button"
      aria-label={step < 0 ? 'Previous version' : 'Next version'}
      data-ctxgraph-branch-picker-step={step < 0 ? 'previous' : 'next'}
      data-disabled={disabled ? '' : undefined}
      disabled={disabled || pending}
      onClick={(event) => {
        onClick?.(event);
        if (!event.defaultPrevented) go(target);
      }}
      {...props}
    >
      {children ?? fallback}
    </button>
  );
}

/** The button to the previous version ("Previous version"; disabled on the first). */
export function BranchPickerPrevious(props: BranchPickerButtonProps): ReactNode {
  return <StepButton step={-1} part="BranchPickerPrevious" fallback="‹" {...props} />;
}

/** The button to the next version ("Next version"; disabled on the last). */
export function BranchPickerNext(props: BranchPickerButtonProps): ReactNode {
  return <StepButton step={1} part="BranchPickerNext" fallback="›" {...props} />;
}

/**
 * The position of the version shown, "2 / 3": a `role="status"` element named "Version 2 of 3",
 * so a change is announced.
 */
export function BranchPickerLabel({
  children,
  ...props
}: HTMLAttributes<HTMLSpanElement>): ReactNode {
  const { versions } = usePicker('BranchPickerLabel');
  const shown = versions.index + 1;
  return (
    <span
      role="status"
      aria-label={`Version ${shown} of ${versions.count}`}
      data-ctxgraph-branch-picker-label=""
      {...props}
    >
      {children ?? `${shown} / ${versions.count}`}
    </span>
  );
}
