import { useCallback, useState } from 'react';
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

/** The page's one notice: what it shows and how to change it. */
export function useNotice(): { notice: Notice | null; show: ShowNotice } {
  const [notice, setNotice] = useState<Notice | null>(null);
  const show = useCallback<ShowNotice>((next) => setNotice(next), []);
  return { notice, show };
}
