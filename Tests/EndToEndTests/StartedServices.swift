/// The services started so far, so that a failed start stops them all.
actor StartedServices {
    private(set) var all: [ServiceProcess] = []

    func add(_ service: ServiceProcess) { all.append(service) }
}
