import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../tooling/vitest.base.ts';

/**
 * The server driven over HTTP by the AI SDK's own clients (AbstractChat's `Chat`, and useChat
 * under jsdom in `*.dom.test.tsx`), and the browser suite (src/e2e). Files run one after another:
 * each holds a port and a SQLite file, and the machine is shared.
 */
const config: ViteUserConfig = packageTests({
  include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
  fileParallelism: false,
  // Tests poll for what the server or the page did (a reply saved, a status): a condition, with a
  // bound a busy machine does not reach (the default second is one it can).
  expect: { poll: { timeout: 20_000, interval: 50 } },
});

export default config;
