import type { ChatUIMessage } from '../../server/tools';
import { Markdown } from './markdown';
import { ConfirmCard, WeatherCard } from './tool-cards';

type Part = ChatUIMessage['parts'][number];
type WeatherPart = Extract<Part, { type: 'tool-getWeather' }>;
type ConfirmPart = Extract<Part, { type: 'tool-askForConfirmation' }>;

/** Props of {@link MessageParts}. */
export interface MessagePartsProps {
  /** The assistant message whose parts are shown. */
  message: ChatUIMessage;
  /**
   * Answers an `askForConfirmation` call (its id, and whether the user confirmed); the Confirm
   * and Decline buttons are disabled while absent.
   */
  onAnswerConfirmation?: ((toolCallId: string, confirmed: boolean) => void) | undefined;
}

function weatherCard(part: WeatherPart) {
  const city = part.input?.city;
  if (part.state === 'output-available') {
    return (
      <WeatherCard
        state="ready"
        city={part.output.city}
        temperatureC={part.output.temperatureC}
        sky={part.output.sky}
      />
    );
  }
  if (part.state === 'output-error') {
    return <WeatherCard state="error" city={city} errorText={part.errorText} />;
  }
  if (part.state === 'output-denied') {
    return <WeatherCard state="error" city={city} errorText="the call was not allowed" />;
  }
  return <WeatherCard state="loading" city={city} />;
}

function confirmCard(part: ConfirmPart, onAnswer: MessagePartsProps['onAnswerConfirmation']) {
  // While the input streams the question is partial: it is shown once whole.
  const question = part.state === 'input-streaming' ? undefined : part.input?.question;
  const answer = part.state === 'output-available' ? part.output.confirmed : undefined;
  return (
    <ConfirmCard
      question={question}
      answer={answer}
      disabled={onAnswer === undefined}
      onAnswer={(confirmed) => onAnswer?.(part.toolCallId, confirmed)}
    />
  );
}

/**
 * An assistant message's parts in order: text as Markdown, the app's tools as cards (the weather,
 * the confirmation question). Step boundaries, reasoning and parts the app has no card for are
 * not shown.
 */
export function MessageParts({ message, onAnswerConfirmation }: MessagePartsProps) {
  return (
    <>
      {message.parts.map((part, index) => {
        // Parts have no id of their own; their order in a message never changes.
        const key = `${message.id}-${index}`;
        switch (part.type) {
          case 'text':
            return <Markdown key={key} text={part.text} />;
          case 'tool-getWeather':
            return <div key={key}>{weatherCard(part)}</div>;
          case 'tool-askForConfirmation':
            return <div key={key}>{confirmCard(part, onAnswerConfirmation)}</div>;
          default:
            return null;
        }
      })}
    </>
  );
}
