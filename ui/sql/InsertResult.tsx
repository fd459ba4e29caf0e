/**
 * What an INSERT run from the workbench wrote: the topic, the formats, and where each record went
 * (partition and offset, in statement order), in the place a query's rows take.
 */
import type { InsertAnswer } from "../api/sql.ts";
import { TableHead } from "../components.tsx";
import { count } from "../format.ts";

export function InsertResult({ answer }: { answer: InsertAnswer }) {
  const offsets = answer.offsets ?? [];
  return (
    <section className="insert-result" aria-label="Records written">
      <p className="run-notice">
        <strong>
          Wrote {count(answer.records)} {answer.records === 1 ? "record" : "records"} to {answer.topic}
        </strong>{" "}
        (key {answer.keyType}, value {answer.valueType}), each acknowledged by the in-sync replicas; the audit log has it as TOPIC_DATA
        INSERT.
      </p>
      <div className="grid-scroll results insert-offsets">
        <table aria-label="Where each record went">
          <TableHead columns={["Row", "Partition", "Offset"]} />
          <tbody>
            {offsets.map((o, i) => (
              <tr key={`${o.partition}:${o.offset}`}>
                <td>{i + 1}</td>
                <td>{o.partition}</td>
                <td>{o.offset}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
