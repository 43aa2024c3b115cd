import { useCallback, useEffect, useState } from 'react';
import { describeError } from '../describe-error';

/** What the bar under the top bar says: an error of the last action, or what it did. */
export interface Notice {
  kind: 'error' | 'info';
  title: string;
  message: string;
}

/** Shows a notice, or clears it with null. */
export type ShowNotice = (notice: Notice | null) => void;

/** An error as a notice, in the user's words. */
export function noticeFor(error: unknown): Notice {
  return { kind: 'error', ...describeError(error) };
}

/** How long a notice of what an action did stays (an error stays until dismissed). */
const INFO_NOTICE_MS = 8000;

/**
 * The page's one notice: what it shows and how to change it. It floats over the page's foot;
 * a notice of what an action did goes by itself after {@link INFO_NOTICE_MS}, an error stays.
 */
export function useNotice(): { notice: Notice | null; show: ShowNotice } {
  const [notice, setNotice] = useState<Notice | null>(null);
  const show = useCallback<ShowNotice>((next) => setNotice(next), []);
  useEffect(() => {
    if (notice?.kind !== 'info') return;
    const timer = setTimeout(
      () => setNotice((current) => (current === notice ? null : current)),
      INFO_NOTICE_MS,
    );
    return () => clearTimeout(timer);
  }, [notice]);
  return { notice, show };
}
