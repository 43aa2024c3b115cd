// The reference page's features in a real browser (Chromium through playwright-core) against the
// app on a real port with a real SQLite file: Markdown, the weather card, the confirmation
// answered from the page, the stop marker, dark and light colours, and a chat by keyboard alone.
// Every wait is for a condition the page or the server reaches, never for a time.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../__fixtures__/chat-test-kit';
import { createMockModel } from '../server/mock-model';
import type { ChatUIMessage } from '../server/tools';
import {
  buildClient,
  chromiumInstalled,
  holdBackAfter,
  launchBrowser,
  untilStopped,
} from './browser-kit';

const installed = chromiumInstalled();

/** Where the light and dark screenshots go when `CHAT_SCREENSHOTS` names a folder (else none). */
const screenshots = process.env.CHAT_SCREENSHOTS;

describe.skipIf(!installed)('the reference page in a browser', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ctxgraph-chat-page-'));
  const clientDirectory = join(directory, 'client');
  let browser: BrowserContext;
  /** The mock at a brisk pace. */
  let server: TestServer;
  /** The mock, a word every 100 ms, that waits after its last word until it is stopped. */
  let stoppable: TestServer;

  beforeAll(async () => {
    await buildClient(clientDirectory);
    server = await startTestServer({ chunkDelayMs: 5, clientDirectory });
    stoppable = await startTestServer({
      model: untilStopped(createMockModel({ chunkDelayMs: 100 })),
      clientDirectory,
    });
    browser = await launchBrowser(join(directory, 'profile'));
  });

  afterAll(async () => {
    await browser?.close();
    await server?.stop();
    await stoppable?.stop();
    rmSync(directory, { recursive: true, force: true });
  });

  async function open(url: string, chatId: string): Promise<Page> {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    await page.goto(`${url}/#${chatId}`);
    await expect.poll(() => page.getByTestId('status').textContent()).toBe('ready');
    return page;
  }

  const status = (page: Page) => page.getByTestId('status').textContent();
  const messages = (page: Page) => page.getByTestId('message');
  const stored = async (at: TestServer, chatId: string): Promise<ChatUIMessage[]> =>
    ((await at.messages(chatId)).body as { messages: ChatUIMessage[] }).messages;

  async function send(page: Page, text: string): Promise<void> {
    await page.getByLabel('Message', { exact: true }).fill(text);
    await page.getByRole('button', { name: 'Send', exact: true }).click();
  }

  it("renders the assistant's Markdown, and shows the model's HTML as text, never as markup", async () => {
    const page = await open(server.url, 'markdown');
    await send(page, 'some **bold**, `code` and a [link](https://example.com):\n- one\n- two');
    const reply = messages(page).nth(1);
    await expect.poll(() => reply.locator('li').allTextContents()).toEqual(['one', 'two']);
    // Sent with the button: the focus is back in the textarea for the next message.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Message',
    );
    await expect.poll(() => status(page)).toBe('ready');
    expect(await reply.locator('strong').textContent()).toBe('bold');
    expect(await reply.locator('code').textContent()).toBe('code');
    const link = reply.locator('a');
    expect(await link.getAttribute('href')).toBe('https://example.com');
    expect(await link.getAttribute('rel')).toBe('noopener noreferrer');
    // The user's own message is shown as written: no Markdown.
    expect(await messages(page).nth(0).locator('strong').count()).toBe(0);

    const hostile =
      '<img src="x" onerror="window.injected = 1"> <script>window.injected = 2</script>';
    await send(page, hostile);
    const echo = messages(page).nth(3);
    await expect.poll(() => echo.getByTestId('message-text').textContent()).toContain(hostile);
    await expect.poll(() => status(page)).toBe('ready');
    expect(await echo.locator('img, script').count()).toBe(0);
    expect(await page.evaluate(() => (window as { injected?: number }).injected)).toBeUndefined();
    await page.close();
  });

  it('shows getWeather as a card: loading while the call runs, then the city, °C and sky', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(15_000);
    // The network holds the reply back once the call's input is there: the tool has not answered.
    await page.addInitScript(holdBackAfter, '"type":"tool-input-available"');
    await page.goto(`${server.url}/#weather`);
    await expect.poll(() => status(page)).toBe('ready');
    await send(page, 'what is the weather like?');
    const card = messages(page).nth(1).getByTestId('weather-card');
    await expect.poll(() => card.getAttribute('data-state')).toBe('loading');
    expect(await card.getAttribute('aria-busy')).toBe('true');
    expect(await card.textContent()).toContain('Checking the weather in Paris');
    await expect
      .poll(() => page.evaluate(() => (window as { heldBack?: number }).heldBack ?? 0))
      .toBeGreaterThan(0);

    await page.evaluate(() => (window as unknown as { releaseHeld: () => void }).releaseHeld());
    await expect.poll(() => card.getAttribute('data-state')).toBe('ready');
    expect(await card.getAttribute('aria-busy')).toBe('false');
    expect(await card.getByRole('heading').textContent()).toBe('Weather in Paris');
    expect(await card.getByTestId('weather-temperature').textContent()).toBe('18 °C');
    expect(await card.getByTestId('weather-sky').textContent()).toBe('clear');
    // The call is a card, not its JSON (the mock's own words quote the result after it).
    await expect.poll(() => status(page)).toBe('ready');
    expect(await card.textContent()).not.toContain('{');
    await page.close();
  });

  it('asks askForConfirmation with Confirm and Decline; an answer finishes the reply, which a reload shows', async () => {
    const page = await open(server.url, 'confirm');
    await send(page, 'please confirm the order');
    const card = messages(page).nth(1).getByTestId('confirm-card');
    await expect
      .poll(() => card.locator('.confirm-question').textContent())
      .toBe('please confirm the order');
    await expect.poll(() => status(page)).toBe('ready');
    // The reply waits for the answer: stored with the call and no output.
    const waiting = await stored(server, 'confirm');
    expect(waiting[1]?.parts.find((part) => part.type === 'tool-askForConfirmation')).toMatchObject(
      { state: 'input-available' },
    );

    await card.getByRole('button', { name: 'Confirm' }).click();
    // The mock's words after the answer say what the tool's output was.
    const answered = 'You said: please confirm the order You confirmed: going ahead.';
    await expect
      .poll(() => messages(page).nth(1).getByTestId('message-text').textContent())
      .toContain(answered);
    await expect.poll(() => status(page)).toBe('ready');
    expect(await card.getByTestId('confirm-answer').textContent()).toBe('✓ Confirmed');
    expect(await card.getByRole('button').count()).toBe(0);
    // The answer took the focus from the buttons it replaced.
    expect(
      await page.evaluate(() => document.activeElement?.getAttribute('data-testid') ?? null),
    ).toBe('confirm-answer');
    // One reply, finished in place: the call answered, then the text.
    const after = await stored(server, 'confirm');
    expect(after).toHaveLength(2);
    expect(after[1]?.id).toBe(waiting[1]?.id);
    expect(after[1]?.parts.find((part) => part.type === 'tool-askForConfirmation')).toMatchObject({
      state: 'output-available',
      output: { confirmed: true },
    });

    await page.reload();
    await expect.poll(() => status(page)).toBe('ready');
    const reloaded = messages(page).nth(1);
    await expect.poll(() => reloaded.getByTestId('message-text').textContent()).toContain(answered);
    expect(await reloaded.getByTestId('confirm-answer').textContent()).toBe('✓ Confirmed');
    expect(await reloaded.getByRole('button', { name: 'Confirm' }).count()).toBe(0);

    // Decline, by keyboard: the model is told `confirmed: false`.
    await send(page, 'confirm the refund');
    const second = messages(page).nth(3).getByTestId('confirm-card');
    await expect.poll(() => status(page)).toBe('ready');
    await second.getByRole('button', { name: 'Decline' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => messages(page).nth(3).getByTestId('message-text').textContent())
      .toContain('You declined: nothing was done.');
    expect(await second.getByTestId('confirm-answer').textContent()).toBe('✕ Declined');
    await page.close();
  });

  it('marks a stopped reply, on the page and after a reload, and gives the focus back to the composer', async () => {
    const page = await open(stoppable.url, 'stopped');
    await send(page, 'please repeat one two three four five six seven eight nine ten');
    const reply = messages(page).nth(1);
    await expect
      .poll(async () => ((await reply.getByTestId('message-text').textContent()) ?? '').length)
      .toBeGreaterThan('You said: please'.length);
    await expect.poll(() => status(page)).toBe('streaming');
    await page.getByRole('button', { name: 'Stop' }).click();
    await expect.poll(() => status(page)).toBe('ready');
    const marker = page.getByTestId('message').nth(1).getByTestId('outcome');
    await expect.poll(() => marker.textContent()).toBe('stopped');
    expect(await marker.isVisible()).toBe(true);
    expect(await marker.getAttribute('title')).toContain('stopped before it finished');
    expect(await page.getByRole('button', { name: 'Stop' }).count()).toBe(0);
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Message',
    );
    await page.reload();
    await expect.poll(() => status(page)).toBe('ready');
    await expect
      .poll(() => page.getByTestId('message').nth(1).getByTestId('outcome').textContent())
      .toBe('stopped');
    await page.close();
  });

  /** The relative luminance (0 black, 1 white) of a CSS `rgb(…)` colour. */
  const luminance = (color: string): number => {
    const [red = 0, green = 0, blue = 0] = (color.match(/[\d.]+/g) ?? []).map(Number);
    const linear = (channel: number) => {
      const value = channel / 255;
      return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * linear(red) + 0.7152 * linear(green) + 0.0722 * linear(blue);
  };

  it('follows the system colour scheme: light and dark colours, readable in both', async () => {
    const page = await open(server.url, 'colours');
    await send(page, 'what is the **weather** today?');
    await expect.poll(() => messages(page).nth(1).getByTestId('weather-card').count()).toBe(1);
    await expect.poll(() => status(page)).toBe('ready');
    await send(page, 'please confirm the booking');
    await expect.poll(() => messages(page).nth(3).getByTestId('confirm-card').count()).toBe(1);
    await expect.poll(() => status(page)).toBe('ready');
    // A second version of the last reply: the branch picker shows on it.
    await messages(page).nth(3).getByRole('button', { name: 'Regenerate' }).click();
    await expect
      .poll(() => messages(page).nth(3).getByTestId('version-position').textContent())
      .toBe('2 / 2');
    await expect.poll(() => status(page)).toBe('ready');
    const colours = () =>
      page.evaluate(() => {
        const style = (selector: string) => {
          const element = document.querySelector(selector);
          if (element === null) throw new Error(`No ${selector} on the page.`);
          return getComputedStyle(element);
        };
        return {
          page: style('body').backgroundColor,
          text: style('body').color,
          composer: style('.composer').backgroundColor,
          card: style('.weather-card').backgroundColor,
          cardText: style('.weather-temperature').color,
        };
      });
    for (const scheme of ['light', 'dark'] as const) {
      await page.emulateMedia({ colorScheme: scheme });
      await expect
        .poll(async () => luminance((await colours()).page) < 0.2)
        .toBe(scheme === 'dark');
      const shown = await colours();
      const [background, text] = [luminance(shown.page), luminance(shown.text)];
      if (scheme === 'dark') {
        expect(background).toBeLessThan(0.05);
        expect(text).toBeGreaterThan(0.7);
        expect(luminance(shown.composer)).toBeLessThan(0.1);
        expect(luminance(shown.card)).toBeLessThan(0.1);
        expect(luminance(shown.cardText)).toBeGreaterThan(0.7);
      } else {
        expect(background).toBeGreaterThan(0.85);
        expect(text).toBeLessThan(0.05);
        expect(luminance(shown.composer)).toBeGreaterThan(0.9);
        expect(luminance(shown.card)).toBeGreaterThan(0.9);
        expect(luminance(shown.cardText)).toBeLessThan(0.05);
      }
      // Contrast of the text on the page (WCAG: 4.5 for body text).
      const contrast = (Math.max(background, text) + 0.05) / (Math.min(background, text) + 0.05);
      expect(contrast).toBeGreaterThan(7);
      if (screenshots) {
        mkdirSync(screenshots, { recursive: true });
        await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
        await page.screenshot({ path: join(screenshots, `chat-${scheme}.png`) });
      }
    }
    await page.close();
  });

  it('keeps the version a user chose in the URL: a reload and a new tab show it, not the newest', async () => {
    const page = await open(server.url, 'chosen-version');
    await send(page, 'first question');
    await expect.poll(() => status(page)).toBe('ready');
    await messages(page).nth(0).getByRole('button', { name: 'Edit' }).click();
    await page.getByLabel('Edit message').fill('second question');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('message-text').allTextContents())
      .toEqual(['second question', 'You said: second question']);
    await expect.poll(() => status(page)).toBe('ready');
    const picker = messages(page).nth(0).getByTestId('versions');
    await expect.poll(() => picker.getByTestId('version-position').textContent()).toBe('2 / 2');
    await picker.getByRole('button', { name: 'Previous version' }).click();
    await expect
      .poll(() => page.getByTestId('message-text').allTextContents())
      .toEqual(['first question', 'You said: first question']);
    // The version shown is the URL's: `?node=` names its leaf.
    await expect.poll(() => new URL(page.url()).searchParams.get('node')).not.toBeNull();
    await page.reload();
    await expect
      .poll(() => page.getByTestId('message-text').allTextContents())
      .toEqual(['first question', 'You said: first question']);
    await expect.poll(() => picker.getByTestId('version-position').textContent()).toBe('1 / 2');
    const copy = await browser.newPage();
    await copy.goto(page.url());
    await expect
      .poll(() => copy.getByTestId('message-text').allTextContents())
      .toEqual(['first question', 'You said: first question']);
    await copy.close();
    // The newest again: the URL drops the node.
    await picker.getByRole('button', { name: 'Next version' }).click();
    await expect
      .poll(() => page.getByTestId('message-text').allTextContents())
      .toEqual(['second question', 'You said: second question']);
  });

  it("shows the chat's context use in the header gauge, from the server's inspect()", async () => {
    const page = await open(server.url, 'gauge');
    expect(await page.getByTestId('context-gauge').count()).toBe(0);
    await send(page, 'how big is my context?');
    await expect.poll(() => status(page)).toBe('ready');
    const tokens = page.getByTestId('context-tokens');
    await expect.poll(() => tokens.count()).toBe(1);
    const gauge = (await (await fetch(`${server.url}/api/chat/gauge/context`)).json()) as {
      tokens: number;
    };
    expect(gauge.tokens).toBeGreaterThan(0);
    expect(await tokens.textContent()).toContain(`${gauge.tokens} tokens`);
    // A second turn adds to it.
    await send(page, 'and now?');
    await expect.poll(() => status(page)).toBe('ready');
    await expect
      .poll(async () => Number((await tokens.textContent())?.match(/^(\d+)/)?.[1] ?? 0))
      .toBeGreaterThan(gauge.tokens);
  });

  it('works by keyboard alone: Enter sends, Shift+Enter breaks the line, edits and versions by keys', async () => {
    const page = await open(server.url, 'keyboard');
    // The composer has the focus when the page opens.
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Message',
    );
    // Enter on an empty draft sends nothing.
    await page.keyboard.press('Enter');
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type('second line');
    await page.keyboard.press('Enter');
    // As shown (innerText): the reply's Markdown turns the line break into a <br>.
    await expect
      .poll(() => page.getByTestId('message-text').allInnerTexts())
      .toEqual(['first line\nsecond line', 'You said: first line\nsecond line']);
    await expect.poll(() => status(page)).toBe('ready');
    expect(await page.getByLabel('Message', { exact: true }).inputValue()).toBe('');
    expect(await page.evaluate(() => document.activeElement?.getAttribute('aria-label'))).toBe(
      'Message',
    );
    expect((await stored(server, 'keyboard')).map((message) => message.role)).toEqual([
      'user',
      'assistant',
    ]);

    // Edit by keys: the Edit button, Enter, the text replaced, Enter.
    await page.getByRole('button', { name: 'Edit' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Edit message');
    // Escape cancels: the focus goes back to Edit.
    await page.keyboard.press('Escape');
    await expect.poll(() => page.evaluate(() => document.activeElement?.textContent)).toBe('Edit');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Edit message');
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.type('edited line');
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('message-text').allTextContents())
      .toEqual(['edited line', 'You said: edited line']);
    await expect.poll(() => status(page)).toBe('ready');

    // The question has two versions, the second on screen; the previous one is a key away.
    const picker = messages(page).nth(0).getByTestId('versions');
    await expect.poll(() => picker.getByTestId('version-position').textContent()).toBe('2 / 2');
    expect(await picker.getAttribute('aria-label')).toBe('Version 2 of 2');
    expect(await picker.getByRole('button', { name: 'Next version' }).isDisabled()).toBe(true);
    await picker.getByRole('button', { name: 'Previous version' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => page.getByTestId('message-text').allInnerTexts())
      .toEqual(['first line\nsecond line', 'You said: first line\nsecond line']);
    await expect.poll(() => picker.getByTestId('version-position').textContent()).toBe('1 / 2');
    // The focus stays on the picker: on its other arrow, "Previous" being disabled at the first.
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Next version');

    // A regenerated reply is a version with an id of its own: the picker follows it, focus too.
    await messages(page).nth(1).getByRole('button', { name: 'Regenerate' }).focus();
    await page.keyboard.press('Enter');
    const replyPicker = messages(page).nth(1).getByTestId('versions');
    await expect
      .poll(() => replyPicker.getByTestId('version-position').textContent())
      .toBe('2 / 2');
    await expect.poll(() => status(page)).toBe('ready');
    const regenerated = (await stored(server, 'keyboard'))[1]?.id;
    await replyPicker.getByRole('button', { name: 'Previous version' }).focus();
    await page.keyboard.press('Enter');
    await expect
      .poll(() => replyPicker.getByTestId('version-position').textContent())
      .toBe('1 / 2');
    await expect
      .poll(() => page.evaluate(() => document.activeElement?.getAttribute('aria-label')))
      .toBe('Next version');
    const shownId = await messages(page)
      .nth(1)
      .evaluate((element) => element.getAttribute('data-message-id'));
    expect(shownId).not.toBe(regenerated);
    await page.close();
  });
});
