import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { aiMajorPlugin } from './ai-major/vitest-plugin.ts';

/**
 * Shared vitest settings: explicit imports (no globals), type tests in `*.test-d.ts`. Under CI,
 * and when `pnpm test` (tooling/run-tests.mjs) runs the suites, a JSON report is written too, so
 * one total line can be printed for the whole repository (tooling/test-summary.mjs). The run is on
 * an AI SDK major (tooling/ai-major/major.mjs): AI SDK 7 on Node 22+, AI SDK 6 on Node 20 or with
 * `CTXGRAPH_AI_MAJOR=6`.
 *
 * A test's time limit is there to end a test that hangs, never to judge a machine's speed: the
 * default (60 s, and 120 s for hooks) is one a test that takes a second on a quiet machine does
 * not reach on a busy one (vitest's own 5 s is: a CPU-bound test over many generated inputs took
 * 5.5 s at a load of 40 on two cores). Tests wait on conditions and counts, not on time.
 */
export function packageTests(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  const ci =
    process.env.CI === 'true' || process.env.CI === '1' || process.env.CTXGRAPH_TEST_REPORT === '1';
  return defineConfig({
    plugins: [aiMajorPlugin()],
    test: {
      include: ['src/**/*.test.ts'],
      testTimeout: 60_000,
      hookTimeout: 120_000,
      typecheck: { enabled: true, include: ['src/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
      ...(ci ? { reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]] } : {}),
      ...overrides,
    },
  });
}
