import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from '../vitest.base.ts';

/** workerd starts in about a second; bundling takes less. */
const config: ViteUserConfig = packageTests({
  typecheck: { enabled: false },
  testTimeout: 60_000,
  hookTimeout: 60_000,
});

export default config;
