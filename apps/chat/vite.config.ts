import react from '@vitejs/plugin-react';
import { defineConfig, type UserConfig } from 'vite';

/** The browser app: src/client, built into dist/client and served by the playground server. */
const config: UserConfig = defineConfig({
  root: 'src/client',
  plugins: [react()],
  build: {
    outDir: '../../dist/client',
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
  },
});

export default config;
