import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../tooling/vitest.base.ts';

/** Server tests and the browser suite (src/e2e), which starts its own server and Chromium. */
const config: ViteUserConfig = packageTests({
  // The browser suite, the embedded Postgres and the server tests each hold files and ports;
  // running the files one after another keeps the shared 2-core machine responsive.
  fileParallelism: false,
  // The browser suite polls the page; a loaded CI machine (turbo runs packages side by side) can
  // take more than the default second to re-render after a request.
  expect: { poll: { timeout: 20_000, interval: 100 } },
});

export default config;
