import { defineConfig, type ViteUserConfig } from 'vitest/config';

/**
 * Shared vitest settings: explicit imports (no globals), type tests in `*.test-d.ts`. Under CI a
 * JSON report is written too, so `.ci/run` can print one total for the whole repository.
 */
export function packageTests(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  const ci = process.env.CI === 'true' || process.env.CI === '1';
  return defineConfig({
    test: {
      include: ['src/**/*.test.ts'],
      typecheck: { enabled: true, include: ['src/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
      ...(ci ? { reporters: ['default', ['json', { outputFile: '.vitest-report.json' }]] } : {}),
      ...overrides,
    },
  });
}
