export { toXmlName } from './xml-name';
export {
  escapeXmlAttribute,
  escapeXmlText,
  itemElementName,
  XmlRenderer,
  type XmlRendererOptions,
} from './xml-renderer';
