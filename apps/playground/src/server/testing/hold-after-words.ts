import type { LanguageModel } from 'ai';

/** The provider model shape the playground's models have (AI SDK 6 and 7 both take it). */
type ProviderModel = Extract<LanguageModel, { specificationVersion: 'v3' }>;

/** A model held mid-reply (see {@link holdAfterWords}), and how to let its replies go on. */
export interface HeldModel {
  readonly model: LanguageModel;
  /** Lets every reply held now go on to its end; later replies are held again. */
  release(): void;
}

/**
 * `model`, whose streamed replies stop before their word `words + 1` until {@link
 * HeldModel.release} is called or the call is stopped (a reply of at most `words` words is not
 * held): a test sees a reply streaming, or stops it, however fast or busy the machine, instead of
 * racing a stream timed in milliseconds.
 */
export function holdAfterWords(model: LanguageModel, words: number): HeldModel {
  if (typeof model === 'string' || model.specificationVersion !== 'v3')
    throw new Error('holdAfterWords: expected a provider model (specificationVersion v3)');
  const inner = model as ProviderModel;
  const newGate = () => {
    let open = (): void => {};
    const promise = new Promise<void>((resolve) => {
      open = resolve;
    });
    return { promise, open };
  };
  let gate = newGate();
  const held: ProviderModel = {
    specificationVersion: 'v3',
    provider: inner.provider,
    modelId: inner.modelId,
    supportedUrls: inner.supportedUrls,
    doGenerate: (options) => inner.doGenerate(options),
    async doStream(options) {
      const result = await inner.doStream(options);
      const signal = options.abortSignal;
      let seen = 0;
      // Resolves when the gate of this moment opens or the call is stopped.
      const wait = (): Promise<void> => {
        const released = gate.promise;
        return new Promise<void>((resolve) => {
          if (signal?.aborted) return resolve();
          const done = (): void => {
            signal?.removeEventListener('abort', done);
            resolve();
          };
          signal?.addEventListener('abort', done, { once: true });
          void released.then(done);
        });
      };
      return {
        ...result,
        stream: result.stream.pipeThrough(
          new TransformStream({
            async transform(part, controller) {
              if (part.type === 'text-delta') {
                seen += 1;
                // Held once: released, the reply goes on to its end.
                if (seen === words + 1) await wait();
              }
              if (signal?.aborted) return;
              controller.enqueue(part);
            },
          }),
        ),
      };
    },
  };
  return {
    model: held,
    release() {
      gate.open();
      gate = newGate();
    },
  };
}
