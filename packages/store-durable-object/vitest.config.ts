import { cloudflareTest } from '@cloudflare/vitest-plugin';
import { packageTests } from '../../tooling/vitest.base.ts';

const config = packageTests();
config.plugins = [
  ...(config.plugins ?? []),
  cloudflareTest({
    main: './src/__fixtures__/test-worker.ts',
    miniflare: {
      compatibilityDate: '2026-04-01',
      compatibilityFlags: ['nodejs_compat'],
      durableObjects: { CHATS: { className: 'TestChatObject', useSQLite: true } },
    },
  }),
];

export default config;
