import { useEffect, useId, useRef } from 'react';

/** Props of {@link WeatherCard}: the `getWeather` tool's call, as plain data. */
export interface WeatherCardProps {
  /** `loading` while the call's input streams or the tool runs; `error` when it failed. */
  state: 'loading' | 'ready' | 'error';
  /** The city asked about (known once the input is, or partly while it streams). */
  city?: string | undefined;
  /** The temperature in °C (once the tool answered). */
  temperatureC?: number | undefined;
  /** The sky, in a word or two (once the tool answered). */
  sky?: string | undefined;
  /** Why the call failed (state `error`). */
  errorText?: string | undefined;
}

const skyIcons: Readonly<Record<string, string>> = {
  clear: '☀️',
  sunny: '☀️',
  cloudy: '☁️',
  rain: '🌧️',
  snow: '❄️',
};

/** The `getWeather` tool's call as a card: the city, the temperature and the sky. */
export function WeatherCard({ state, city, temperatureC, sky, errorText }: WeatherCardProps) {
  const titleId = useId();
  const place = city ?? 'the city';
  return (
    <section
      className="tool-card weather-card"
      data-testid="weather-card"
      data-state={state}
      aria-labelledby={titleId}
      aria-busy={state === 'loading'}
    >
      <h3 id={titleId} className="tool-card-title">
        Weather{city === undefined ? '' : ` in ${city}`}
      </h3>
      {state === 'loading' ? (
        <p className="tool-card-pending">
          <span className="spinner" aria-hidden="true" /> Checking the weather in {place}…
        </p>
      ) : state === 'error' ? (
        <p className="tool-card-error">The weather could not be read: {errorText}</p>
      ) : (
        <p className="weather-reading">
          <span className="weather-icon" aria-hidden="true">
            {skyIcons[sky ?? ''] ?? '🌡️'}
          </span>
          <span className="weather-temperature" data-testid="weather-temperature">
            {temperatureC} °C
          </span>
          <span className="weather-sky" data-testid="weather-sky">
            {sky}
          </span>
        </p>
      )}
    </section>
  );
}

/** Props of {@link ConfirmCard}: the `askForConfirmation` tool's call, as plain data. */
export interface ConfirmCardProps {
  /** The question the model asks (undefined while its input streams). */
  question: string | undefined;
  /** The user's answer once given (true: confirmed); undefined while unanswered. */
  answer: boolean | undefined;
  /** The buttons are shown but cannot be pressed (a request of the page is under way). */
  disabled?: boolean;
  /** Answers the question: the page adds the tool's output, and the reply goes on. */
  onAnswer: (confirmed: boolean) => void;
}

/** The client-side `askForConfirmation` tool: the model's question with Confirm and Decline. */
export function ConfirmCard({ question, answer, disabled = false, onAnswer }: ConfirmCardProps) {
  const titleId = useId();
  const questionId = useId();
  // The buttons go once answered: focus moves to the answer, not to the page's start.
  const answeredHere = useRef(false);
  const answerRef = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (answer !== undefined && answeredHere.current) {
      answeredHere.current = false;
      answerRef.current?.focus();
    }
  }, [answer]);
  const answerWith = (confirmed: boolean) => {
    answeredHere.current = true;
    onAnswer(confirmed);
  };
  return (
    <section
      className="tool-card confirm-card"
      data-testid="confirm-card"
      data-answer={answer === undefined ? 'none' : answer ? 'confirmed' : 'declined'}
      aria-labelledby={titleId}
      aria-describedby={questionId}
    >
      <h3 id={titleId} className="tool-card-title">
        Confirmation needed
      </h3>
      <p id={questionId} className="confirm-question">
        {question ?? '…'}
      </p>
      {answer === undefined ? (
        <div className="confirm-actions">
          <button
            type="button"
            className="button button-primary"
            disabled={disabled || question === undefined}
            onClick={() => answerWith(true)}
          >
            Confirm
          </button>
          <button
            type="button"
            className="button"
            disabled={disabled || question === undefined}
            onClick={() => answerWith(false)}
          >
            Decline
          </button>
        </div>
      ) : (
        <p className="confirm-answer" data-testid="confirm-answer" ref={answerRef} tabIndex={-1}>
          {answer ? '✓ Confirmed' : '✕ Declined'}
        </p>
      )}
    </section>
  );
}
