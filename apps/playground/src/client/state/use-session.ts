import { useQuery } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { api, type PlaygroundInfo, setApiUser } from '../api';
import { noticeFor, type ShowNotice } from './notice';
import { queryKeys } from './query-keys';

/** Who the page acts as, and what the server told about itself. */
export interface Session {
  /** `GET /api/info`, or null until it answered. */
  info: PlaygroundInfo | null;
  /** The user every request is made as, or null until the server named the default one. */
  userId: string | null;
  /** Acts as another user from now on (remembered in localStorage). */
  switchUser: (userId: string) => void;
}

/** The server's info and the user the page acts as (the one remembered, else the server's default). */
export function useSession(show: ShowNotice): Session {
  const info = useQuery({ queryKey: queryKeys.info(), queryFn: api.info });
  const [chosen, setChosen] = useState<string | null>(null);
  const userId =
    chosen ??
    (info.data ? window.localStorage.getItem('ctxgraph.user') || info.data.defaultUserId : null);
  // Set while rendering, before any query of this user runs (queries run after the render).
  if (userId !== null) setApiUser(userId);

  useEffect(() => {
    if (info.error) show(noticeFor(info.error));
  }, [info.error, show]);

  return {
    info: info.data ?? null,
    userId,
    switchUser: (next) => {
      window.localStorage.setItem('ctxgraph.user', next);
      setApiUser(next);
      setChosen(next);
      // The open chat is read again as the new user (its query key holds the user): another
      // user's chat is refused by the store, and the page shows its message.
      show({
        kind: 'info',
        title: `Now acting as “${next}”`,
        message: 'Your chats are listed on the left.',
      });
    },
  };
}
