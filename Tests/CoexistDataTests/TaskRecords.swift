import CoexistDemo

/// The guide's Task model (V2) as records: the demo model's, as the demo and the benchmark use them.
typealias TaskRecord = DemoTask

/// The guide's Category model (V2).
typealias CategoryRecord = DemoCategory
