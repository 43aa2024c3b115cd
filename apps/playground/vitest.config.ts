import { defineConfig, type ViteUserConfig } from 'vitest/config';

/** Server tests and the browser suite (src/e2e), which starts its own server and Chromium. */
const config: ViteUserConfig = defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The browser suite and the server tests each hold a SQLite file and a port; running the
    // files one after another keeps the shared 2-core machine responsive.
    fileParallelism: false,
  },
});

export default config;
