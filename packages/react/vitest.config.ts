import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../../tooling/vitest.base.ts';

// The hook's tests render React under jsdom (`*.dom.test.tsx`) and wait on what the page shows.
const config: ViteUserConfig = packageTests({
  include: ['src/**/*.test.ts', 'src/**/*.test.tsx'],
  expect: { poll: { timeout: 20_000, interval: 20 } },
});

export default config;
