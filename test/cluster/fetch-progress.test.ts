// @no-services
/** The first start's progress lines: Maven's download lines read, and each step numbered with what comes next. */
import { afterEach, describe, expect, test } from "bun:test";
import { DownloadProgress, endPlan, parseMavenLine, planSteps, setProgressLog, stepLine } from "./fetch-progress.ts";

afterEach(() => {
  endPlan();
  setProgressLog((line) => console.error(line));
});

describe("23: the first start says what it downloads, how far it got and what comes next", () => {
  test.each([
    [
      "[INFO] Downloaded from central: https://repo.maven.apache.org/maven2/org/apache/kafka/kafka-clients/4.3.1/kafka-clients-4.3.1.jar (19 MB at 21 MB/s)",
      { file: "kafka-clients-4.3.1.jar", bytes: 19_000_000 },
    ],
    [
      "Downloaded from central: https://repo.maven.apache.org/maven2/org/apache/apache/13/apache-13.pom (14 kB at 120 kB/s)",
      { file: "apache-13.pom", bytes: 14_000 },
    ],
    ["[INFO] Downloaded from central: https://repo/x/y/z-1.pom (812 B at 9.1 kB/s)", { file: "z-1.pom", bytes: 812 }],
    ["[INFO] Downloading from central: https://repo.maven.apache.org/maven2/x/y-1.jar", null],
    ["[INFO] Copying kafka-clients-4.3.1.jar to /tmp/x/kafka-clients-4.3.1.jar", null],
  ])("%s", (line, expected) => {
    expect(parseMavenLine(line)).toEqual(expected);
  });

  test("each step says which of how many, and the next; a download says files and bytes so far, then its end", () => {
    const lines: string[] = [];
    setProgressLog((l) => lines.push(l));
    planSteps(["Kafka jars", "Apicurio Registry", "Kafka Connect jars"]);
    expect(stepLine("Apicurio Registry")).toBe("[2/3] Apicurio Registry; next: Kafka Connect jars");
    expect(stepLine("Kafka Connect jars")).toBe("[3/3] Kafka Connect jars; the last download");

    let now = 0;
    const p = new DownloadProgress("Kafka jars", 3_000, () => now);
    p.line("[INFO] Downloaded from central: https://r/a/a-1.pom (2 kB at 1 MB/s)");
    now = 3_500;
    p.line("[INFO] Downloaded from central: https://r/k/kafka-clients-4.3.1.jar (19 MB at 21 MB/s)");
    now = 4_000;
    p.line("[INFO] Downloaded from central: https://r/b/b-1.jar (1 MB at 1 MB/s)");
    now = 11_000;
    p.done();
    expect(lines).toEqual([
      "[1/3] Kafka jars: fetching from Maven Central (or ~/.m2) ...; next: Apicurio Registry",
      "  Kafka jars: 2 files, 19.0 MB downloaded so far (kafka-clients-4.3.1.jar)",
      "  Kafka jars: done in 11 s (3 files, 20.0 MB downloaded)",
    ]);
  });

  test("a step with nothing to download says so at its end", () => {
    const lines: string[] = [];
    setProgressLog((l) => lines.push(l));
    const p = new DownloadProgress("Kafka jars", 3_000, () => 0);
    p.done();
    expect(lines).toEqual(["Kafka jars: fetching from Maven Central (or ~/.m2) ...", "  Kafka jars: done in 0 s (all in ~/.m2 already)"]);
  });
});
