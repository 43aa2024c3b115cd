import { type ReactElement, useRef } from 'react';

/** Props of {@link Splitter}. */
export interface SplitterProps {
  /** Its accessible name ("Resize the chat list", …). */
  label: string;
  /** `vertical`: a bar between two columns (drags left/right); `horizontal`: between rows. */
  orientation: 'vertical' | 'horizontal';
  /**
   * The size it controls, and its bounds, in the unit `onChange` takes: whole numbers (pixels,
   * percent), which is what assistive technology reads out.
   */
  value: number;
  min: number;
  max: number;
  /** How much one arrow key press moves it. */
  step: number;
  /** Pixels dragged to units (1 for a width in pixels; 100/height for a percentage). */
  perPixel: number;
  /** The value in words for assistive technology (`aria-valuetext`), when a number is not enough. */
  valueText?: (value: number) => string;
  onChange: (value: number) => void;
}

/**
 * A bar between two panes that resizes them: dragged with the pointer, or focused and moved
 * with the arrow keys (Home and End jump to the bounds). A `separator` with its value for
 * assistive technology.
 */
export function Splitter(props: SplitterProps): ReactElement {
  const start = useRef<{ pointer: number; value: number } | null>(null);
  const along = (event: { clientX: number; clientY: number }) =>
    props.orientation === 'vertical' ? event.clientX : event.clientY;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a focusable, movable separator has no element of its own
    <div
      role="separator"
      tabIndex={0}
      aria-label={props.label}
      aria-orientation={props.orientation}
      aria-valuenow={Math.round(props.value)}
      aria-valuetext={props.valueText?.(Math.round(props.value))}
      aria-valuemin={props.min}
      aria-valuemax={props.max}
      className={`splitter ${props.orientation}`}
      onPointerDown={(event) => {
        event.currentTarget.setPointerCapture(event.pointerId);
        start.current = { pointer: along(event), value: props.value };
      }}
      onPointerMove={(event) => {
        if (start.current === null) return;
        const moved = along(event) - start.current.pointer;
        props.onChange(Math.round(start.current.value + moved * props.perPixel));
      }}
      onPointerUp={() => {
        start.current = null;
      }}
      onKeyDown={(event) => {
        const back = props.orientation === 'vertical' ? 'ArrowLeft' : 'ArrowUp';
        const forth = props.orientation === 'vertical' ? 'ArrowRight' : 'ArrowDown';
        let next: number | null = null;
        if (event.key === back) next = props.value - props.step;
        else if (event.key === forth) next = props.value + props.step;
        else if (event.key === 'Home') next = props.min;
        else if (event.key === 'End') next = props.max;
        if (next === null) return;
        event.preventDefault();
        props.onChange(Math.min(props.max, Math.max(props.min, next)));
      }}
    />
  );
}
