/** Props of {@link BranchPicker}. */
export interface BranchPickerProps {
  /** The version on screen, 0-based. */
  index: number;
  /** How many versions the message has (the picker is for 2 or more). */
  count: number;
  /** Shows version `index` (0-based) instead. */
  onSelect: (index: number) => void;
  /** The arrows cannot be pressed (a request of the page is under way). */
  disabled?: boolean;
}

/**
 * "‹ 2 / 3 ›": which of a message's versions is on screen, with the previous and next ones a
 * press away. The current one is marked by the count (and `aria-current` on the group's label).
 */
export function BranchPicker({ index, count, onSelect, disabled = false }: BranchPickerProps) {
  const position = `${index + 1} / ${count}`;
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of controls, not a form's fieldset.
    <div
      className="branch-picker"
      data-testid="versions"
      data-index={index}
      data-count={count}
      role="group"
      aria-label={`Version ${index + 1} of ${count}`}
    >
      <button
        type="button"
        className="icon-button"
        aria-label="Previous version"
        disabled={disabled || index <= 0}
        onClick={() => onSelect(index - 1)}
      >
        ‹
      </button>
      <span className="branch-position" data-testid="version-position" aria-current="true">
        {position}
      </span>
      <button
        type="button"
        className="icon-button"
        aria-label="Next version"
        disabled={disabled || index >= count - 1}
        onClick={() => onSelect(index + 1)}
      >
        ›
      </button>
    </div>
  );
}
