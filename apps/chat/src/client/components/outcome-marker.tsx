import type { ReplyOutcome } from '../chat-api';

/** The word each outcome is marked with. */
const outcomeLabels: Readonly<Record<ReplyOutcome, string>> = {
  aborted: 'stopped',
  interrupted: 'interrupted',
};

const outcomeTitles: Readonly<Record<ReplyOutcome, string>> = {
  aborted: 'This reply was stopped before it finished; what it had written is kept.',
  interrupted: 'This reply was cut off (its server went away); what it had written is kept.',
};

/** Props of {@link OutcomeMarker}. */
export interface OutcomeMarkerProps {
  /** How the reply ended. */
  outcome: ReplyOutcome;
}

/** A badge on a reply that was stopped or interrupted. */
export function OutcomeMarker({ outcome }: OutcomeMarkerProps) {
  return (
    <em
      className={`outcome outcome-${outcome}`}
      data-testid="outcome"
      data-outcome={outcome}
      title={outcomeTitles[outcome]}
    >
      {outcomeLabels[outcome]}
    </em>
  );
}
