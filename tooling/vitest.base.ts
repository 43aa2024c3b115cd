import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** Shared vitest settings: explicit imports (no globals), type tests in `*.test-d.ts`. */
export function packageTests(overrides: ViteUserConfig['test'] = {}): ViteUserConfig {
  return defineConfig({
    test: {
      include: ['src/**/*.test.ts'],
      typecheck: { enabled: true, include: ['src/**/*.test-d.ts'], tsconfig: './tsconfig.json' },
      ...overrides,
    },
  });
}
