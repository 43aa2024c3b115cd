import { QueryClient } from '@tanstack/react-query';

/**
 * The page's query client. A failed read is shown at once (no retry: the playground talks to its
 * own server, and an error there is one to read, not to wait out), and nothing is read again on a
 * window focus: the page reads when it asks, as an app would.
 */
export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: { retry: false, refetchOnWindowFocus: false },
      mutations: { retry: false },
    },
  });
}
