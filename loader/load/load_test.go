package load

import "path/filepath"

const realdata = "../../testdata/realdata"

var (
	ksqlLogDir = filepath.Join(realdata, "ItumelengMogase_Real-Time-Data-Pipeline-for-Patient-Admissions/kafka-data")
	ksqlDir    = filepath.Join(ksqlLogDir, "_confluent-ksql-default__command_topic-0")
	lsxSegment = filepath.Join(realdata, "BiggerBrain_kafka/data/lsx1-0/00000000000000000000.log")
)
