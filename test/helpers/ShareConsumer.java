import java.time.Duration;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaShareConsumer;
import org.apache.kafka.common.errors.WakeupException;

/**
 * A real Kafka share consumer (KIP-932) for the tests: joins share group args[1] on topic args[2]
 * of bootstrap args[0] as client id args[3], prints "joined" after its first poll and "records <n>"
 * whenever it has read more, acknowledging what it reads (implicit acknowledgement). It leaves the
 * group and exits when its standard input closes. Run with Java's source launcher and the broker's
 * jars on the class path (test/helpers/share-consumer.ts).
 */
public class ShareConsumer {
  public static void main(String[] args) throws Exception {
    Properties props = new Properties();
    props.put("bootstrap.servers", args[0]);
    props.put("group.id", args[1]);
    props.put("client.id", args[3]);
    props.put("key.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
    props.put("value.deserializer", "org.apache.kafka.common.serialization.ByteArrayDeserializer");
    KafkaShareConsumer<byte[], byte[]> consumer = new KafkaShareConsumer<>(props);
    Thread watcher = new Thread(() -> {
      try {
        while (System.in.read() >= 0) {}
      } catch (Exception ignored) {
      }
      consumer.wakeup();
    });
    watcher.setDaemon(true);
    watcher.start();
    long total = 0;
    boolean first = true;
    try {
      consumer.subscribe(List.of(args[2]));
      while (true) {
        ConsumerRecords<byte[], byte[]> records = consumer.poll(Duration.ofMillis(200));
        if (first) {
          System.out.println("joined");
          first = false;
        }
        if (records.count() > 0) {
          total += records.count();
          System.out.println("records " + total);
        }
      }
    } catch (WakeupException stop) {
      // standard input closed: leave the group
    } finally {
      consumer.close(Duration.ofSeconds(5));
      System.out.println("closed");
    }
  }
}
