#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/copperleaf/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["copperleaf/fee-schedule-2026"] = (
    "Copperleaf Workspaces schedule of fees 2026",
    "Copperleaf Workspaces Pte. Ltd. - Schedule of fees - effective 1 January 2026",
    """
# Schedule of fees 2026
Charges outside your membership fee, for all Copperleaf locations.
Effective 1 January 2026. Prices are in Singapore dollars (SGD) and
exclude GST at 9%, which is added to your invoice.

1. ACCESS
Item                                        Fee
First access card                           Free
Replacement access card (lost or damaged*)  SGD 40
Mobile access in the app                    Free
Access card not returned after leaving      SGD 40
Pedestal or cabinet key, replacement        SGD 25
Locker (one-north and Paya Lebar only)      SGD 45 per month
* Faulty cards are replaced free of charge.

2. MEETING ROOMS AND EVENTS
Item                                        Fee
Extra meeting-room credit (overage)         SGD 25 per credit
Room cleaning after a booking               SGD 60
Event Hall, one-north                       SGD 220 per hour
Event Hall, full day (8 hours)              SGD 1,500
AV technician for events                    SGD 70 per hour

3. PRINTING
Item                                        Fee
Black and white, beyond quota               SGD 0.10 per page
Colour, beyond quota                        SGD 0.50 per page
Scanning                                    Free
<<PAGE>>
4. MAIL
Item                                        Fee
Mail scanning                               SGD 1.50 per item
Mail forwarding (weekly)                    SGD 30 per month, plus
                                            postage at cost
Business Address (Hot Desk members)         SGD 60 per month
Parcel storage beyond 14 days               Not offered

5. NETWORK (PRIVATE OFFICES)
Item                                        Fee
Dedicated network (VLAN)                    SGD 80 per month
Static public IP address                    SGD 45 per month
Extra Ethernet port installed               SGD 150 one-off

6. ACCOUNT AND BILLING
Item                                        Fee
Late payment fee                            SGD 50
Paused Hot Desk membership                  SGD 50 per month
Returned GIRO payment                       SGD 20
Private Office move-out cleaning            SGD 180

Day Pass prices for non-members are SGD 35 for one day and SGD 150 for a
bundle of five. Membership prices are on Membership plans and prices in
our help centre. Questions about a fee? Email billing@copperleaf.exam-
ple or ask the community desk. Fees are reviewed every January, and any
change is announced at least 30 days in advance.
""",
)

DOCS["trailhead/rental-agreement"] = (
    "Trailhead Outfitters rental agreement",
    "Trailhead Outfitters Ltd. - Equipment rental agreement - form RA-7, November 2025",
    """
# Equipment Rental Agreement
Trailhead Outfitters Ltd., 812 Main Street, Canmore, Alberta.
Form RA-7. Applies to rentals picked up from 1 November 2025.

1. THE RENTER
The renter is the person who signs this agreement. The renter must be 18
or older, must show government photo ID, and is responsible for all gear
on the reservation, including gear used by other people in the group.

2. RENTAL PERIOD
A rental day ends at closing time. Gear is due back at the Canmore store
by closing time on the last day. Late fees are set out in the help
centre under Returning gear and late returns.

3. CONDITION OF THE GEAR
The renter must check the gear at pickup and tell staff about any damage
before leaving the store. Damage not reported at pickup is presumed to
have happened during the rental.

4. REPLACEMENT VALUES
If gear is lost, stolen without the Full Waiver, or not returned within
72 hours, the renter pays its replacement value:

Gear                                  Replacement value (CAD)
Sport ski package                     $900
Performance ski package               $1,400
Snowboard package                     $850
Cross-country classic package         $500
Hardtail mountain bike                $1,800
Full-suspension mountain bike         $4,500
E-bike (Class 1)                      $6,500
Junior bike                           $700
2-person backpacking tent             $450
4-person car-camping tent             $600
Sleeping bag with liner               $250
<<PAGE>>
5. USE OF THE GEAR
The renter agrees not to:
- lend the gear to anyone not named on the reservation;
- ride bikes on closed trails or outside Alberta and British Columbia;
- take gear out of Canada;
- modify the gear, including binding settings, without our staff.

6. DEPOSIT HOLD
The renter authorises Trailhead Outfitters to place a hold on their
credit card as set out in the Deposits and credit card holds policy, and
to charge late fees, repair charges and replacement values to that card.

7. RELEASE OF LIABILITY
Skiing, snowboarding, mountain biking and camping involve risks that can
cause injury or death. The renter and every rider sign a separate release
of liability waiver before using the gear.

8. DISPUTES
If the renter disagrees with a charge, they may ask for a review by
email to rentals@trailheadoutfitters.example within 30 days of the
charge. The store manager replies within 10 business days. This agree-
ment is governed by the laws of Alberta.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "copperleaf make_pdfs.py")


if __name__ == "__main__":
    main()
