import type { ViteUserConfig } from 'vitest/config';
import { packageTests } from './vitest.base.ts';

/**
 * The READMEs' examples, the PostgreSQL test server the Postgres suites share, and the AI SDK
 * major switch.
 */
const config: ViteUserConfig = packageTests({
  include: ['*.test.ts', 'ai-major/*.test.ts'],
  typecheck: { enabled: false },
  testTimeout: 120_000,
  hookTimeout: 120_000,
});

export default config;
